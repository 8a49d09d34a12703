"""Instant-NGP-style radiance field (hash grid + small MLPs) on renders of a mostly empty scene.
The density follows the mip-NeRF config (raw + density_bias=-1) but keeps vanilla NeRF's ReLU.
Hash features start at ~1e-4, so raw is ~+-0.15 everywhere and relu(raw - 1) = 0 for every
sample: the density ReLU is dead from step 0, no gradient reaches the grid or either MLP, the
render stays blank white and the loss is flat. fixed=True: softplus(raw - 1) (mip-NeRF).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "density_act"
SOURCE = ("google/mipnerf MipNerfModel: density_activation=softplus with density_bias=-1 vs the "
          "vanilla NeRF relu density; mixing the two gives the known 'NeRF renders stay blank/white, "
          "loss flat' failure (NeRF ReLU density dying); instant-NGP hash encoding (Mueller et al. 2022)")

STEPS = 120
RAYS = 128
SAMPLES = 24
DENSITY_BIAS = -1.0  # mip-NeRF default shift of the raw density


class HashGrid(nn.Module):
    """Multiresolution hash encoding, trilinear interpolation, pure torch."""

    def __init__(self, levels=8, feat=2, log2_size=12, base_res=4, growth=1.5):
        super().__init__()
        self.size = 2 ** log2_size
        self.res = [int(base_res * growth ** l) for l in range(levels)]
        self.table = nn.Parameter(torch.empty(levels, self.size, feat).uniform_(-1e-4, 1e-4))
        self.register_buffer("primes", torch.tensor([1, 2654435761, 805459861]))
        self.register_buffer("corners", torch.tensor([[i >> 2 & 1, i >> 1 & 1, i & 1] for i in range(8)]))

    def forward(self, p):  # p in [0, 1)^3, (N, 3)
        out = []
        for l, r in enumerate(self.res):
            x = p * r
            x0 = x.floor().long()
            w = x - x0
            c = x0[:, None, :] + self.corners[None]
            if (r + 1) ** 3 <= self.size:
                idx = (c[..., 0] * (r + 1) + c[..., 1]) * (r + 1) + c[..., 2]
            else:
                idx = ((c[..., 0] * self.primes[0]) ^ (c[..., 1] * self.primes[1])
                       ^ (c[..., 2] * self.primes[2])) % self.size
            cw = torch.where(self.corners[None].bool(), w[:, None, :], 1 - w[:, None, :]).prod(-1)
            out.append((self.table[l][idx] * cw[..., None]).sum(1))
        return torch.cat(out, -1)


class NGPField(nn.Module):
    def __init__(self, fixed=False):
        super().__init__()
        self.encoding = HashGrid()
        self.sigma_net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 16))
        self.density_act = nn.Softplus() if fixed else nn.ReLU()
        self.color_net = nn.Sequential(nn.Linear(15 + 3, 64), nn.ReLU(), nn.Linear(64, 3))

    def forward(self, origins, dirs):
        R = origins.shape[0]
        t = (torch.arange(SAMPLES).float() + 0.5) / SAMPLES * 2.0
        delta = 2.0 / SAMPLES
        pts = origins[:, None, :] + dirs[:, None, :] * t[None, :, None]
        h = self.encoding(((pts + 1) / 2).clamp(0, 1 - 1e-6).reshape(-1, 3))
        g = self.sigma_net(h)
        sigma = self.density_act(g[:, 0] + DENSITY_BIAS).view(R, SAMPLES)
        d = dirs[:, None, :].expand(R, SAMPLES, 3).reshape(-1, 3)
        rgb = torch.sigmoid(self.color_net(torch.cat([g[:, 1:], d], -1))).view(R, SAMPLES, 3)
        alpha = 1 - torch.exp(-sigma * delta)
        trans = torch.cumprod(torch.cat([torch.ones(R, 1), 1 - alpha + 1e-10], 1), 1)[:, :-1]
        w = alpha * trans
        return (w[..., None] * rgb).sum(1) + (1 - w.sum(1, keepdim=True))  # white background


def _scene(pts):
    c = torch.tensor([[0.35, 0.25, 0.0], [-0.4, -0.2, 0.15]])
    rad = torch.tensor([0.3, 0.25])
    col = torch.tensor([[0.85, 0.2, 0.1], [0.1, 0.3, 0.8]])
    inside = ((((pts[..., None, :] - c) ** 2).sum(-1)) < rad ** 2).float()
    return (inside * 300.0).sum(-1), (inside[..., None] * col).sum(-2).clamp(0, 1)


def _render_gt(o, d, n=96):
    t = (torch.arange(n).float() + 0.5) / n * 2.0
    sigma, rgb = _scene(o[:, None, :] + d[:, None, :] * t[None, :, None])
    alpha = 1 - torch.exp(-sigma * 2.0 / n)
    trans = torch.cumprod(torch.cat([torch.ones(o.shape[0], 1), 1 - alpha + 1e-10], 1), 1)[:, :-1]
    w = alpha * trans
    return (w[..., None] * rgb).sum(1) + (1 - w.sum(1, keepdim=True))


def _rays(g):
    """Orthographic rays along +-x, +-y, +-z through [-1, 1]^3 (six views)."""
    ax = torch.randint(3, (RAYS,), generator=g)
    sgn = (torch.randint(2, (RAYS,), generator=g) * 2 - 1).float()
    uv = torch.rand(RAYS, 2, generator=g) * 2 - 1
    o = torch.zeros(RAYS, 3)
    d = torch.zeros(RAYS, 3)
    for a in range(3):
        m = ax == a
        oth = [i for i in range(3) if i != a]
        o[m, a] = -sgn[m]
        d[m, a] = sgn[m]
        o[m, oth[0]] = uv[m, 0]
        o[m, oth[1]] = uv[m, 1]
    return (o, d), _render_gt(o, d)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(700 + seed)
    batches = [_rays(g) for _ in range(STEPS)]
    model = NGPField(fixed=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.99), eps=1e-15)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=STEPS, amp_dtype=None, scaler=None)
