"""Deep Sets (phi -> mean pool -> rho) regressing a set statistic, every Linear
initialised with a Caffe-style Gaussian(0, 0.01).

Mechanism: the user ported a Caffe/TF1 prototxt and kept its
``weight_filler { type: "gaussian" std: 0.01 }`` for every Linear layer of the
per-element network phi and the set-level network rho.  With std 0.01 and
fan-in 32..64, each ReLU layer multiplies the activation scale by roughly
0.01 * sqrt(fan_in / 2) ~ 0.05, so after the 4-6 phi layers, the mean pool and
the rho layers the prediction is ~1e-10 and every weight gradient is scaled by
the same vanishing factor.  Targets are standardised (mean 0), so the output
bias cannot reduce the loss either: plain SGD sits on the initial loss.

ORIGIN: ``phi.0`` -- the first Linear of phi is where the geometric shrinking
starts (the input is O(1), its output is already ~0.05x that); every later layer
only compounds it.

Fix: He (kaiming_normal_, relu gain) initialisation of the Linears; nothing
else changes (same data, optimiser, lr, depth, zero biases).
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "phi.0"
SOURCE = ("Zaheer et al. 2017 'Deep Sets' point-cloud / set-statistic regression; "
          "Caffe gaussian std=0.01 weight_filler carried over to a deep ReLU phi network "
          "(classic 'loss does not move with std 0.01 init on a deep net' forum report)")


class DeepSets(nn.Module):
    def __init__(self, d_in, width, phi_depth, rho_depth):
        super().__init__()
        phi = []
        d = d_in
        for _ in range(phi_depth):
            phi += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.phi = nn.Sequential(*phi)
        rho = []
        for _ in range(rho_depth):
            rho += [nn.Linear(width, width), nn.ReLU()]
        rho += [nn.Linear(width, 1)]
        self.rho = nn.Sequential(*rho)

    def forward(self, x):                  # x: (B, N, d_in)
        h = self.phi(x)                    # per element
        pooled = h.mean(dim=1)             # permutation-invariant mean pool
        return self.rho(pooled).squeeze(-1)


def _make_sets(g, n_batches, bsz, set_size, d_in):
    xs = torch.randn(n_batches, bsz, set_size, d_in, generator=g)
    # sum-decomposable set statistic: "interaction energy" of each point plus the
    # positive mass along the last axis, summed over the set
    y = torch.tanh(xs[..., 0] * xs[..., 1]).sum(dim=2) + 0.5 * torch.relu(xs[..., -1]).sum(dim=2)
    y = (y - y.mean()) / y.std()           # standardised targets
    return [(xs[i], y[i]) for i in range(n_batches)]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=64, phi_depth=4, rho_depth=2, lr=0.003, bsz=128, set_size=16, d_in=3, steps=150),
        dict(width=48, phi_depth=5, rho_depth=2, lr=0.01, bsz=96, set_size=12, d_in=3, steps=160),
        dict(width=32, phi_depth=6, rho_depth=1, lr=0.005, bsz=160, set_size=20, d_in=4, steps=140),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = DeepSets(cfg["d_in"], cfg["width"], cfg["phi_depth"], cfg["rho_depth"])
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")  # He init
            else:
                nn.init.normal_(m.weight, mean=0.0, std=0.01)           # caffe gaussian filler
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = _make_sets(g, cfg["steps"], cfg["bsz"], cfg["set_size"], cfg["d_in"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
