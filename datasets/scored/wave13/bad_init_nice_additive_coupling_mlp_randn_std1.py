"""NICE (Dinh et al. 2014) density model with additive coupling layers on tabular data.

Mechanism: the coupling networks m(.) are deep ReLU MLPs.  The user ported a TF1
implementation whose initializer was ``tf.random_normal`` (stddev=1.0) and wrote
``nn.init.normal_(w, 0.0, 1.0)`` on every Linear of every coupling net.  With fan-in
32..64 the activation scale of each ReLU layer grows by ~sqrt(fan_in/2) ~ 4-6x, so the
additive shift of the very first coupling is already thousands of times larger than the
data, the next coupling receives those huge values and amplifies them again, and the
latent z (and the Gaussian NLL ~ z^2/2) is astronomically large from step 0.  Adam then
takes lr-sized steps on weights that would have to shrink by orders of magnitude; the
loss stays enormous / overflows.

ORIGIN: ``couplings.0.net.0`` -- the first Linear of the first coupling MLP, where the
geometric growth starts (every later layer only amplifies what it receives).

Fix: keep PyTorch's default (Kaiming-uniform) init of the coupling MLPs (the usual
NICE recipe); nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "couplings.0.net.0"
SOURCE = ("NICE additive coupling flow (Dinh et al. 2014) ported from TF1 code that used "
          "tf.random_normal_initializer(stddev=1.0); forum reports of NICE/RealNVP NLL of 1e20+ "
          "at step 0 after a custom weight init")


class AdditiveCoupling(nn.Module):
    def __init__(self, dim, hidden, depth, parity):
        super().__init__()
        self.parity = parity
        half = dim // 2
        layers = [nn.Linear(half, hidden), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(hidden, hidden), nn.ReLU()]
        layers += [nn.Linear(hidden, dim - half)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        half = x.shape[1] // 2
        if self.parity:
            x = x.flip(1)
        x1, x2 = x[:, :half], x[:, half:]
        y2 = x2 + self.net(x1)
        y = torch.cat([x1, y2], 1)
        if self.parity:
            y = y.flip(1)
        return y


class NICE(nn.Module):
    def __init__(self, dim, hidden, depth, n_coupling):
        super().__init__()
        self.couplings = nn.ModuleList(
            [AdditiveCoupling(dim, hidden, depth, i % 2) for i in range(n_coupling)])
        self.log_scale = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        for c in self.couplings:
            x = c(x)
        z = x * torch.exp(self.log_scale)
        return z, self.log_scale.sum()


def nll(out, target):
    z, logdet = out
    d = z.shape[1]
    log_pz = -0.5 * (z ** 2).sum(1) - 0.5 * d * math.log(2 * math.pi)
    return -(log_pz + logdet).mean() / d  # nats per dimension


def _make_data(g, n, dim):
    # correlated, non-Gaussian tabular data: a few latent factors + sensor noise (standardised)
    k = max(2, dim // 3)
    a = torch.randn(k, dim, generator=g)
    base = torch.randn(n, k, generator=g)
    x = base @ a + 0.5 * torch.tanh(2 * base[:, :1]) ** 2 + 0.15 * torch.randn(n, dim, generator=g)
    x = (x - x.mean(0)) / x.std(0)
    return x


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(dim=8, hidden=64, depth=4, n=4, bs=128, lr=1e-3, steps=120),
           dict(dim=10, hidden=48, depth=4, n=4, bs=96, lr=5e-4, steps=100),
           dict(dim=6, hidden=32, depth=3, n=6, bs=64, lr=1e-3, steps=140)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = NICE(cfg["dim"], cfg["hidden"], cfg["depth"], cfg["n"])
    if not fixed:
        # "tf.random_normal" port: N(0, 1) on every coupling Linear
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, 1.0)
                nn.init.zeros_(m.bias)
    data = _make_data(g, cfg["bs"] * cfg["steps"], cfg["dim"])
    batches = []
    for i in range(cfg["steps"]):
        xb = data[i * cfg["bs"]:(i + 1) * cfg["bs"]]
        batches.append((xb, torch.zeros(xb.shape[0])))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nll, batches=batches, steps=cfg["steps"])
