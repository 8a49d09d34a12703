"""Contact-tracing outcome model: hand-written graph attention network over a contact graph with per-person sparse embeddings (SGD, NLL loss).

Healthy. Each batch is one contact-tracing cluster (60-90 people): node features (standardised
age, symptom days, test delay, vaccination, setting of exposure) plus a learnable per-person
embedding (``nn.Embedding(sparse=True)``, people recur across clusters); edges are traced
contacts. A two-layer GAT (with a linear skip per layer) written by hand computes pairwise attention scores for all pairs and
sets non-edges to ``-inf`` with ``masked_fill`` before the softmax; every person has a self
loop, so no row is all -inf and the -inf never reaches the loss. The output is log_softmax over
three outcomes (not infected / infected, asymptomatic / infected, symptomatic), trained with
``NLLLoss``. Things a naive monitor would flag, all harmless here: -inf values inside the
attention scores, sparse embedding gradients that are exactly zero for everyone not in the
current cluster, and a loss that varies with cluster composition.

ORIGIN: None (healthy).

Fix: nothing to fix; fixed=True builds the same run.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Velickovic et al. 2018 graph attention networks (masked attention over neighbours); "
          "GNNs on contact-tracing graphs for infection risk; PyTorch sparse Embedding + SGD")


class GATLayer(nn.Module):
    def __init__(self, d_in, d_out, heads):
        super().__init__()
        self.heads, self.d = heads, d_out
        self.W = nn.Linear(d_in, heads * d_out, bias=False)
        self.a_src = nn.Parameter(torch.randn(heads, d_out) * 0.1)
        self.a_dst = nn.Parameter(torch.randn(heads, d_out) * 0.1)
        self.skip = nn.Linear(d_in, heads * d_out)

    def forward(self, h, adj):
        n = h.shape[0]
        z = self.W(h).view(n, self.heads, self.d)
        s = (z * self.a_src).sum(-1)                                  # (n, H)
        t = (z * self.a_dst).sum(-1)
        e = nn.functional.leaky_relu(t.unsqueeze(1) + s.unsqueeze(0), 0.2)   # (n_dst, n_src, H)
        e = e.masked_fill(~adj.unsqueeze(-1), float("-inf"))
        att = torch.softmax(e, dim=1)
        return torch.einsum("ijh,jhd->ihd", att, z).reshape(n, self.heads * self.d) + self.skip(h)


class ContactGAT(nn.Module):
    def __init__(self, n_people, d_feat, d_emb, hidden, heads):
        super().__init__()
        self.person = nn.Embedding(n_people, d_emb, sparse=True)
        self.gat1 = GATLayer(d_feat + d_emb, hidden, heads)
        self.act = nn.ELU()
        self.gat2 = GATLayer(hidden * heads, hidden, 1)
        self.out = nn.Linear(hidden, 3)

    def forward(self, ids, feats, adj):
        h = torch.cat([feats, self.person(ids)], -1)
        h = self.act(self.gat1(h, adj))
        h = self.act(self.gat2(h, adj))
        return torch.log_softmax(self.out(h), -1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [16, 24, 32][seed % 3]
    heads = [4, 2, 3][seed % 3]
    lr = [0.1, 0.15, 0.08][seed % 3]
    steps = 200
    n_people = 600
    risk = torch.randn(n_people, generator=g)                          # latent per-person susceptibility
    batches = []
    for _ in range(steps):
        n = int(torch.randint(60, 91, (1,), generator=g))
        ids = torch.randperm(n_people, generator=g)[:n]
        feats = torch.randn(n, 5, generator=g)
        p = torch.rand(n, n, generator=g) < (4.0 / n)
        adj = p | p.T | torch.eye(n, dtype=torch.bool)
        seedcase = (torch.rand(n, generator=g) < 0.1).float()
        exposure = (adj.float() @ seedcase) - seedcase
        score = 1.5 * exposure + 0.8 * risk[ids] + 0.5 * feats[:, 0] - 1.0
        inf = torch.sigmoid(2 * score) > torch.rand(n, generator=g)
        symp = (feats[:, 1] + 0.5 * feats[:, 0]) > 0
        y = torch.where(inf | (seedcase > 0), torch.where(symp, 2, 1), 0)
        batches.append(((ids, feats, adj), y))
    model = ContactGAT(n_people, 5, 8, hidden, heads)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.NLLLoss()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
