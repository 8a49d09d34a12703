"""Physics-informed network for a driven, damped oscillator u'' + 2*zeta*w*u' + w^2*u = w^2*sin(2*pi*t)
with u(0)=0, u'(0)=0 on t in [0, 1]: a small tanh MLP maps t to u(t), the ODE residual is formed with
autograd (first and second derivatives w.r.t. the collocation points, create_graph=True) and the loss
is the mean squared (w^2-normalised) residual plus the initial-condition penalties. The optimiser is Adam with lr=0.3,
a value copied from a plain regression notebook; PINN losses are stiff (the residual weights the
second derivative and w^2 = 100), so the first Adam steps (each moving every weight by ~lr) throw the
tanh units into saturation and the net collapses to a near-constant u(t); the loss then hovers at
the u == 0 level it started from instead of converging. Fix: lr=5e-3 (same Adam, same
everything else)."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Raissi et al. 2019 PINNs / 'Understanding and mitigating gradient pathologies in PINNs' "
          "(Wang, Teng, Perdikaris 2021): stiff residual losses need small Adam learning rates; "
          "damped-oscillator PINN tutorials use lr ~1e-3")

ZETA, W = 0.2, 10.0
OMEGA = 2 * math.pi * 1.0


class OscillatorPINN(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.fc1 = nn.Linear(1, width)
        self.fc2 = nn.Linear(width, width)
        self.fc3 = nn.Linear(width, width)
        self.out = nn.Linear(width, 1)
        nn.init.zeros_(self.out.weight)   # start from u == 0, which already meets the ICs
        nn.init.zeros_(self.out.bias)

    def u(self, t):
        h = torch.tanh(self.fc1(t))
        h = torch.tanh(self.fc2(h))
        h = torch.tanh(self.fc3(h))
        return self.out(h)

    def forward(self, t):
        t = t.detach().clone().requires_grad_(True)
        u = self.u(t)
        du = torch.autograd.grad(u.sum(), t, create_graph=True)[0]
        d2u = torch.autograd.grad(du.sum(), t, create_graph=True)[0]
        residual = (d2u + 2 * ZETA * W * du + W ** 2 * u) / W ** 2 - torch.sin(OMEGA * t)
        t0 = torch.zeros(1, 1, requires_grad=True)
        u0 = self.u(t0)
        du0 = torch.autograd.grad(u0.sum(), t0, create_graph=True)[0]
        return {"residual": residual, "u0": u0, "du0": du0}


def pinn_loss(out, target):
    return (out["residual"].pow(2).mean() + (out["u0"] - target["u0"]).pow(2).mean()
            + (out["du0"] / W - target["du0"]).pow(2).mean())


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, n_col = 250, 128
    model = OscillatorPINN()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3 if fixed else 0.3)
    target = {"u0": torch.zeros(1, 1), "du0": torch.zeros(1, 1)}
    batches = [(torch.rand(n_col, 1, generator=g), target) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=pinn_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
