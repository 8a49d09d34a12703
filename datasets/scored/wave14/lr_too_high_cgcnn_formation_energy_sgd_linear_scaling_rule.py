"""Crystal Graph Convolutional Neural Network (CGCNN, Xie & Grossman 2018) predicting
formation energy per atom, trained with SGD + momentum at an lr obtained by applying the
"linear scaling rule" to the reference recipe without dividing by the reference batch.

Mechanism
---------
The reference recipe is SGD(lr=0.02, momentum=0.9) at 32 crystals per batch.  The user
trains with 12-24 crystals per batch and applied the linear scaling rule as
``lr = base_lr * batch_size`` -- the ``/ 32`` was forgotten -- giving lr = 0.24-0.48,
32x too large.  Every SGD step is then far larger than the weights (update/weight ratios
>> 1e-3): after the first update the MSE (targets standardised, ~0.3-0.7 at step 0)
jumps by 2-4 orders of magnitude and never comes back.  The BatchNorm layers inside the gated
convolutions (sigmoid filter * softplus core) keep the activations bounded, so there is no
NaN: the loss stays at ~1.5-50x its initial value for the rest of the run (a divergent
plateau).

ORIGIN
------
None: no single layer is at fault; every parameter is updated with the same oversized step.

Fix
---
lr = 0.02 * batch_size / 32 (0.0075-0.015); same model, batches and momentum.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("CGCNN (Xie & Grossman, PRL 2018) trained with SGD + momentum; linear lr scaling "
          "rule (Goyal et al. 2017) applied without dividing by the reference batch size")


class GaussianDistance(nn.Module):
    def __init__(self, dmin, dmax, n):
        super().__init__()
        self.register_buffer("centers", torch.linspace(dmin, dmax, n))
        self.var = (dmax - dmin) / (n - 1)

    def forward(self, d):
        return torch.exp(-((d.unsqueeze(-1) - self.centers) ** 2) / self.var ** 2)


class ConvLayer(nn.Module):
    def __init__(self, a, e):
        super().__init__()
        self.fc_full = nn.Linear(2 * a + e, 2 * a)
        self.bn1 = nn.BatchNorm1d(2 * a)
        self.bn2 = nn.BatchNorm1d(a)

    def forward(self, v, nbr_idx, nbr_fea):
        B, N, M = nbr_idx.shape
        a = v.shape[-1]
        v_nbr = torch.gather(v.unsqueeze(1).expand(B, N, N, a), 2,
                             nbr_idx.unsqueeze(-1).expand(B, N, M, a))
        z = torch.cat([v.unsqueeze(2).expand(B, N, M, a), v_nbr, nbr_fea], dim=-1)
        g = self.bn1(self.fc_full(z).view(-1, 2 * a)).view(B, N, M, 2 * a)
        filt, core = g.chunk(2, dim=-1)
        s = (torch.sigmoid(filt) * F.softplus(core)).sum(2)
        s = self.bn2(s.view(-1, a)).view(B, N, a)
        return F.softplus(v + s)


class CGCNN(nn.Module):
    def __init__(self, n_elem, a, n_conv, h, n_gauss):
        super().__init__()
        self.gdf = GaussianDistance(0.0, 6.0, n_gauss)
        self.embedding = nn.Linear(n_elem, a)
        self.convs = nn.ModuleList([ConvLayer(a, n_gauss) for _ in range(n_conv)])
        self.conv_to_fc = nn.Linear(a, h)
        self.fc_out = nn.Linear(h, 1)

    def forward(self, atom_fea, nbr_idx, nbr_dist):
        v = self.embedding(atom_fea)
        e = self.gdf(nbr_dist)
        for conv in self.convs:
            v = conv(v, nbr_idx, e)
        crys = v.mean(1)                                     # mean pooling over atoms
        return self.fc_out(F.softplus(self.conv_to_fc(F.softplus(crys)))).squeeze(-1)


def _crystals(g, B, N, M, n_elem, eps_e, r0):
    elem = torch.randint(0, n_elem, (B, N), generator=g)
    pos = torch.rand(B, N, 3, generator=g) * (N ** (1 / 3)) * 2.2
    d = torch.cdist(pos, pos) + torch.eye(N) * 1e3
    nd, ni = d.topk(M, dim=-1, largest=False)
    ei = elem.unsqueeze(-1).expand(B, N, M)
    ej = torch.gather(elem.unsqueeze(1).expand(B, N, N), 2, ni)
    rr = r0[ei] + r0[ej]
    pair = 0.5 * ((rr / nd) ** 6 - 2.0 * (rr / nd) ** 3).clamp(max=3.0)
    energy = (eps_e[elem] + pair.sum(-1)).mean(-1)          # eV/atom
    atom_fea = F.one_hot(elem, n_elem).float()
    return (atom_fea, ni, nd), energy


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(N=8, M=6, a=32, n_conv=3, h=64, B=16, steps=60),
           dict(N=10, M=8, a=24, n_conv=2, h=48, B=24, steps=50),
           dict(N=6, M=5, a=40, n_conv=4, h=64, B=12, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(93 + seed)
    n_elem = 8
    eps_e = torch.randn(n_elem, generator=g) * 1.5
    r0 = 0.7 + 0.4 * torch.rand(n_elem, generator=g)
    raw = [_crystals(g, cfg["B"], cfg["N"], cfg["M"], n_elem, eps_e, r0) for _ in range(cfg["steps"])]
    ys = torch.cat([y for _, y in raw])
    mu, sd = ys.mean(), ys.std()
    batches = [(x, (y - mu) / sd) for x, y in raw]          # normalised targets (as CGCNN does)
    model = CGCNN(n_elem, cfg["a"], cfg["n_conv"], cfg["h"], n_gauss=24)
    base_lr, ref_batch = 0.02, 32                            # reference recipe
    if fixed:
        lr = base_lr * cfg["B"] / ref_batch                  # linear scaling rule
    else:
        lr = base_lr * cfg["B"]                              # BUG: "/ ref_batch" forgotten
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=0.0)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
