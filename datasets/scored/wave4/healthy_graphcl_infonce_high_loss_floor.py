"""GraphCL-style self-supervised pre-training (You et al. 2020): each small graph (node features +
dense adjacency) is augmented twice by node-feature masking and edge dropping, a 2-layer GCN with
mean readout and a projection head embeds both views, and an NT-Xent/InfoNCE loss with temperature
0.2 contrasts them against the other graphs in the batch. The loss starts near log(2B-1) ~ 4-5 and
levels off well above zero because augmentations make positives imperfect and in-batch negatives
include near-duplicates: a high, slowly-moving loss that looks stuck but is the normal floor of a
contrastive objective. Training is healthy."""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "healthy"
ORIGIN = None
SOURCE = "GraphCL (You et al. 2020) / SimCLR NT-Xent; contrastive loss floor well above zero is expected"
class GCNEnc(nn.Module):
    def __init__(s, d, h, p):
        super().__init__(); s.g1 = nn.Linear(d, h); s.g2 = nn.Linear(h, h); s.proj = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, p))
    def embed(s, x, A):
        deg = A.sum(-1, keepdim=True).clamp_min(1); h = F.relu(s.g1((A @ x) / deg)); h = F.relu(s.g2((A @ h) / deg))
        return s.proj(h.mean(1))
    def forward(s, x1, A1, x2, A2): return s.embed(x1, A1), s.embed(x2, A2)
def nt_xent(out, tau):
    z1, z2 = out; z = F.normalize(torch.cat([z1, z2]), dim=-1); B = z1.shape[0]
    sim = z @ z.T / tau; sim = sim.masked_fill(torch.eye(2 * B, dtype=torch.bool), float("-inf"))
    tgt = torch.cat([torch.arange(B, 2 * B), torch.arange(0, B)])
    return F.cross_entropy(sim, tgt)
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    N, d, h, p = 12 + 4 * seed, 8, 32 + 8 * seed, 16; B = 32 + 16 * seed; steps = 120
    model = GCNEnc(d, h, p)
    protos = torch.randn(24, N, d, generator=g)
    def aug(x, A):
        m = (torch.rand(x.shape[:2], generator=g) > 0.2).float()[..., None]
        e = (torch.rand(A.shape, generator=g) > 0.2).float(); e = torch.maximum(e, e.transpose(1, 2))
        return x * m + 0.3 * torch.randn(x.shape, generator=g), A * e
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, 24, (B,), generator=g)
        x = protos[idx] + 0.5 * torch.randn(B, N, d, generator=g)
        A = (torch.rand(B, N, N, generator=g) < 0.3).float(); A = torch.maximum(A, A.transpose(1, 2)) + torch.eye(N)
        x1, A1 = aug(x, A); x2, A2 = aug(x, A)
        batches.append(((x1, A1, x2, A2), None))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: nt_xent(o, 0.2), batches=batches, steps=steps, amp_dtype=None, scaler=None)
