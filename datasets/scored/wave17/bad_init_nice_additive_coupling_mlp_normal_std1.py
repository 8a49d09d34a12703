"""NICE (Dinh et al. 2014): stacked additive coupling layers (x2 <- x2 + m(x1)) with ReLU MLP
coupling functions and a final diagonal exp-scaling layer; max likelihood under a logistic/Gaussian
prior on 8-d tabular data, Adam.

Mechanism: every Linear is initialised with nn.init.normal_(w, 0, 1) ("standard normal init") and
zero bias. Each Linear then multiplies the activation scale by ~sqrt(fan_in/2) (~5-8x), so the
shift produced by the first coupling's MLP is already ~1e3-1e4 and each further coupling feeds
that into the next MLP; the scale compounds geometrically across couplings, z reaches >1e19 and
0.5*z^2 overflows float32 at step 0. ORIGIN: the first Linear of the first coupling MLP, where the
geometric growth begins. Fix: default (kaiming-uniform) init of the coupling MLPs.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "couplings.0.net.0"
SOURCE = "NICE re-implementations on tabular/UCI data with a custom weights init normal(0,1) for all Linear layers; NLL inf from the first batch"


class AdditiveCoupling(nn.Module):
    def __init__(self, d, hidden, depth, parity):
        super().__init__()
        self.parity = parity
        h = d // 2
        layers = [nn.Linear(h, hidden), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(hidden, hidden), nn.ReLU()]
        layers += [nn.Linear(hidden, d - h)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        h = x.shape[1] // 2
        a, b = (x[:, :h], x[:, h:]) if self.parity == 0 else (x[:, h:], x[:, :h])
        b = b + self.net(a)
        return torch.cat([a, b], 1) if self.parity == 0 else torch.cat([b, a], 1)


class NICE(nn.Module):
    def __init__(self, d, hidden, depth, n_coupling):
        super().__init__()
        self.couplings = nn.ModuleList([AdditiveCoupling(d, hidden, depth, i % 2) for i in range(n_coupling)])
        self.log_scale = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        for c in self.couplings:
            x = c(x)
        z = x * torch.exp(self.log_scale)
        log_pz = -0.5 * (z ** 2).sum(1) - 0.5 * z.shape[1] * math.log(2 * math.pi)
        return log_pz + self.log_scale.sum()


def _data(g, n, mix):
    d = mix.shape[1]
    t = torch.rand(n, 1, generator=g) * 2 * math.pi
    base = torch.cat([torch.cos(t), torch.sin(t)], 1)
    return 4.0 * (base @ mix) + 0.3 * torch.randn(n, d, generator=g)


def build(seed, fixed=False):
    cfg = [dict(h=64, depth=3, nc=8, lr=3e-3, bs=64), dict(h=96, depth=2, nc=10, lr=2e-3, bs=128), dict(h=48, depth=4, nc=8, lr=3e-3, bs=32)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = 8
    model = NICE(d, cfg["h"], cfg["depth"], cfg["nc"])
    if not fixed:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, 1.0)
                nn.init.zeros_(m.bias)
    steps = 150
    mix = torch.randn(2, d, generator=g)
    batches = [(x, None) for x in (_data(g, cfg["bs"], mix) for _ in range(steps))]
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loss_fn = lambda log_px, _: -log_px.mean()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
