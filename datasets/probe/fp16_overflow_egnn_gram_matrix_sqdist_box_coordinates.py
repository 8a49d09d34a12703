"""E(n)-equivariant GNN (Satorras et al. 2021) regressing the log depth of the softened
gravitational potential at each halo of small halo groups cut from a 500 Mpc/h N-body box,
trained under float16 autocast on CPU. Each EGNN layer takes squared distances from the Gram
matrix, d2 = diag(G)_i + diag(G)_j - 2 G with G = x @ x^T; autocast runs that matmul in
float16 and, with positions kept in the box frame (|x| ~ 100-760), entries pass 65504: G holds
inf, inf - inf gives NaN distances, outputs and loss from step 0. The model is translation
invariant, so in float32 the box frame is harmless.
fixed=True: the Gram/distance op runs in float32 (autocast disabled for it); data unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "layers.0"
SOURCE = ("Matmul-based Euclidean distances in half precision overflow past 65504: "
          "Lightning-AI/torchmetrics#1380, pytorch/pytorch#29528 and #136748 "
          "(use_mm_for_euclid_dist in half); EGNN layer as in Satorras et al. 2021.")

R_SCALE2 = 100.0  # (10 Mpc/h)^2, typical squared separation inside a group


class EGNNLayer(nn.Module):
    def __init__(self, hidden, fp32_dist):
        super().__init__()
        self.fp32_dist = fp32_dist
        self.phi_e = nn.Sequential(nn.Linear(2 * hidden + 1, hidden), nn.SiLU(),
                                   nn.Linear(hidden, hidden), nn.SiLU())
        self.phi_x = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))
        self.phi_h = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(),
                                   nn.Linear(hidden, hidden))
        with torch.no_grad():
            self.phi_x[-1].weight.mul_(0.01)

    def sq_dist(self, x):
        g = x @ x.transpose(-1, -2)
        sq = torch.diagonal(g, dim1=-2, dim2=-1)
        return (sq.unsqueeze(-1) + sq.unsqueeze(-2) - 2 * g).clamp_min(0.0)

    def forward(self, h, x):
        b, n, _ = h.shape
        if self.fp32_dist:
            with torch.autocast("cpu", enabled=False):
                d2 = self.sq_dist(x.float())
        else:
            d2 = self.sq_dist(x)
        hi = h.unsqueeze(2).expand(b, n, n, h.shape[-1])
        hj = h.unsqueeze(1).expand(b, n, n, h.shape[-1])
        m = self.phi_e(torch.cat([hi, hj, (d2 / R_SCALE2).unsqueeze(-1).to(hi.dtype)], -1))
        mask = (1.0 - torch.eye(n)).view(1, n, n, 1)
        m = m * mask
        diff = x.unsqueeze(2) - x.unsqueeze(1)
        x = x + (diff * self.phi_x(m) * mask).sum(2) / (n - 1)
        h = h + self.phi_h(torch.cat([h, m.sum(2)], -1))
        return h, x


class EGNN(nn.Module):
    def __init__(self, hidden, n_layers, fp32_dist):
        super().__init__()
        self.embed = nn.Linear(1, hidden)
        self.layers = nn.ModuleList(EGNNLayer(hidden, fp32_dist) for _ in range(n_layers))
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, logm, pos):
        h = self.embed(logm.unsqueeze(-1))
        x = pos
        for layer in self.layers:
            h, x = layer(h, x)
        return self.head(h).squeeze(-1)


def _halo_groups(n_groups, n_halo, g):
    centers = 60.0 + 380.0 * torch.rand(n_groups, 1, 3, generator=g)   # Mpc/h, box frame
    pos = centers + 6.0 * torch.randn(n_groups, n_halo, 3, generator=g)
    logm = torch.randn(n_groups, n_halo, generator=g) * 0.5           # log10(M / 1e13 Msun/h)
    mass = 10.0 ** logm
    d = (pos.unsqueeze(2) - pos.unsqueeze(1)).pow(2).sum(-1)
    eye = torch.eye(n_halo).bool()
    inv_r = torch.where(eye, torch.zeros_like(d), (d + 25.0).rsqrt())
    phi = -(inv_r * mass.unsqueeze(1)).sum(-1)
    return logm, pos, torch.log(-phi)   # log depth of the group potential well


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    steps, bsz, n_halo = 150, 4, 12
    logm, pos, phi = _halo_groups(steps * bsz, n_halo, g)
    phi = (phi - phi.mean()) / phi.std()
    batches = []
    for s in range(steps):
        sl = slice(s * bsz, (s + 1) * bsz)
        batches.append(((logm[sl], pos[sl]), phi[sl]))
    model = EGNN(hidden=32, n_layers=3, fp32_dist=fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
