"""Graph auto-encoder (Kipf & Welling 2016) for link prediction on citation-like graphs: two graph
convolutions produce node embeddings Z, the decoder is sigmoid(z_u . z_v), and the loss is binary
cross-entropy on the decoder probabilities over positive edges and sampled non-edges (as in many GAE
repos: F.binary_cross_entropy on sigmoid outputs). The graph convolution was written with the raw
adjacency plus self-loops, (A + I) X W, instead of the symmetric normalisation
D^-1/2 (A + I) D^-1/2. With bag-of-words node features and degrees of 20-40, the summed embeddings
share a large common component, so every inner product, for edges and non-edges alike, is in the
hundreds: the decoder sigmoid returns exactly 1.0 for every pair, its derivative is exactly zero,
and the non-edges' BCE sits at its clamp while no gradient reaches the encoder. The loss is flat and
finite. Fixed: the symmetric degree normalisation of the adjacency (GCN's renormalisation trick),
which keeps the decoder pre-activations O(1)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "decoder"
SOURCE = "GAE/VGAE (Kipf & Welling 2016) reimplementations with unnormalised adjacency; sigmoid + BCE saturation on large inner products"

class InnerProductDecoder(nn.Module):
    def forward(self, z, pairs):
        return torch.sigmoid((z[pairs[0]] * z[pairs[1]]).sum(-1))

class GAE(nn.Module):
    def __init__(self, fin, hid, emb, normalise):
        super().__init__()
        self.conv1 = nn.Linear(fin, hid)
        self.conv2 = nn.Linear(hid, emb)
        self.decoder = InnerProductDecoder()
        self.normalise = normalise
    def forward(self, x, adj, pairs):
        a = adj + torch.eye(adj.shape[0])
        if self.normalise:
            dinv = a.sum(1).rsqrt()
            a = dinv[:, None] * a * dinv[None, :]
        h = F.relu(a @ self.conv1(x))
        z = a @ self.conv2(h)
        return self.decoder(z, pairs)

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(271 + seed)
    n, fin, hid, emb, lr, steps, ncom = [(120, 64, 32, 16, 0.01, 120, 4), (150, 48, 24, 16, 0.02, 100, 5), (100, 80, 32, 24, 0.01, 150, 3)][seed]
    model = GAE(fin, hid, emb, normalise=fixed)
    com = torch.randint(0, ncom, (n,), generator=g)
    topic = (torch.rand(ncom, fin, generator=g) < 0.25).float()
    x = (torch.rand(n, fin, generator=g) < 0.1 + 0.5 * topic[com]).float()
    same = (com[:, None] == com[None, :]).float()
    p = 0.8 * same * 30 / (n / ncom) + 0.02 * (1 - same)
    a = (torch.rand(n, n, generator=g) < p).float().triu(1)
    adj = a + a.t()
    pos = adj.triu(1).nonzero().t()
    batches = []
    for _ in range(steps):
        k = min(256, pos.shape[1])
        pp = pos[:, torch.randperm(pos.shape[1], generator=g)[:k]]
        neg = torch.randint(0, n, (2, k), generator=g)
        pairs = torch.cat([pp, neg], 1)
        y = torch.cat([torch.ones(k), adj[neg[0], neg[1]]])
        batches.append(((x, adj, pairs), y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.binary_cross_entropy, batches=batches, steps=steps, amp_dtype=None, scaler=None)
