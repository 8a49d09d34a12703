"""NeuMF (He et al. 2017: GMF + MLP towers over user/item embeddings) on implicit feedback with
BCE. The RMSprop lr (0.1) was carried over from the SGD recipe; RMSprop divides by sqrt of a
running mean square that starts at 0, so its first updates are ~lr/sqrt(1-alpha) = 10x lr per
coordinate. Embeddings and tower weights are thrown far, the logits become huge and the BCE sits
high and erratic (confidently wrong predictions) instead of decreasing.
ORIGIN: None (optimiser step size). Fix: lr 1e-2."""
import torch, torch.nn as nn
CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "NCF/NeuMF reimplementations switching optimizer while keeping lr"
class NeuMF(nn.Module):
    def __init__(s, nu, ni, k, h):
        super().__init__(); s.ug = nn.Embedding(nu, k); s.ig = nn.Embedding(ni, k); s.um = nn.Embedding(nu, k); s.im = nn.Embedding(ni, k)
        for e in (s.ug, s.ig, s.um, s.im): nn.init.normal_(e.weight, std=0.01)
        s.mlp = nn.Sequential(nn.Linear(2 * k, h), nn.ReLU(), nn.Linear(h, h // 2), nn.ReLU()); s.out = nn.Linear(k + h // 2, 1)
    def forward(s, u, i): return s.out(torch.cat([s.ug(u) * s.ig(i), s.mlp(torch.cat([s.um(u), s.im(i)], 1))], 1)).squeeze(-1)
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    nu, ni, k, h, bs, steps, lr = [(200, 300, 16, 64, 256, 100, 0.1), (150, 200, 8, 32, 128, 120, 0.2), (300, 400, 24, 96, 512, 80, 0.1)][seed]
    model = NeuMF(nu, ni, k, h)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2 if fixed else lr)
    U = torch.randn(nu, 4, generator=g); V = torch.randn(ni, 4, generator=g)
    batches = []
    for _ in range(steps):
        u = torch.randint(0, nu, (bs,), generator=g); i = torch.randint(0, ni, (bs,), generator=g)
        y = (torch.rand(bs, generator=g) < torch.sigmoid(3.0 * (U[u] * V[i]).sum(1))).float()
        batches.append(((u, i), y))
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
