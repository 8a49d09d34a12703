"""Neural ODE for fast chemical kinetics, fixed-step RK4 written by hand, trained under
float16 autocast.

Mechanism: the vector field is an MLP whose output is multiplied by a known rate scale
(2e4 1/s, the order of the fastest rate constant) so that the network itself works at
O(1) -- the usual trick for stiff kinetics.  The state stays float32, but under fp16
autocast every stage derivative k1..k4 that leaves the MLP is float16, and the RK4
update is written, as in textbooks, as y + h/6 * (k1 + 2 k2 + 2 k3 + k4): the stage
sum is formed in float16 before it is multiplied by the tiny step h = 1e-5 s.  At
initialisation the stage derivatives are a few thousand and the sum fits in fp16; as
the network learns the fast A->B conversion (true |dy/dt| up to several 1e4) a stage
derivative of ~1.1e4 is enough for the stage sum to pass 65504 and become inf (the
derivatives themselves are still finite), and the trajectory and loss are inf/NaN
after 20-40 steps.  In float32 the same values (~1e5, times h/6 ~ 0.2) are harmless.  The GradScaler cannot help: the overflow is in the
forward pass.

ORIGIN is stepper, the RK4 step module in which the float16 stage sum overflows.

Fix: form the stage combination in float32 (cast the stage derivatives with .float()
before summing, "fp32 for the op"); model, data, autocast, scaler, lr unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "stepper"
SOURCE = ("Neural ODEs for stiff chemical kinetics (e.g. Kim et al. 2021 'Stiff neural "
          "ordinary differential equations', rate scaling); AMP float16 range 65504")


class KineticsField(nn.Module):
    def __init__(self, width, rate_scale):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, width),
                                 nn.Tanh(), nn.Linear(width, 3))
        self.rate_scale = rate_scale

    def forward(self, y):
        return self.net(y) * self.rate_scale


class RK4Step(nn.Module):
    def __init__(self, fp32_combine):
        super().__init__()
        self.fp32_combine = fp32_combine

    def forward(self, f, y, h):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        if self.fp32_combine:
            k1, k2, k3, k4 = k1.float(), k2.float(), k3.float(), k4.float()
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


class StiffNeuralODE(nn.Module):
    def __init__(self, width, rate_scale, fp32_combine):
        super().__init__()
        self.field = KineticsField(width, rate_scale)
        self.stepper = RK4Step(fp32_combine)

    def forward(self, y0, n_steps, h):
        ys = [y0]
        y = y0
        for _ in range(int(n_steps)):
            y = self.stepper(self.field, y, h)
            ys.append(y)
        return torch.stack(ys, 1)


def true_kinetics(y0, n_steps, h, k):
    k1, k2, k3 = k

    def f(y):
        A, B, C = y.unbind(-1)
        return torch.stack([-k1 * A + k2 * B, k1 * A - k2 * B - k3 * B, k3 * B], -1)

    ys = [y0]
    y = y0
    for _ in range(n_steps):
        for _ in range(4):
            hh = h / 4
            a1 = f(y); a2 = f(y + hh / 2 * a1); a3 = f(y + hh / 2 * a2); a4 = f(y + hh * a3)
            y = y + hh / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        ys.append(y)
    return torch.stack(ys, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(width=48, bs=32, n_steps=16, lr=3e-3, steps=80, k=(7.0e4, 2e4, 5e3)),
        dict(width=64, bs=24, n_steps=12, lr=2e-3, steps=90, k=(8.0e4, 2.5e4, 6e3)),
        dict(width=40, bs=40, n_steps=20, lr=5e-3, steps=80, k=(9.0e4, 2e4, 5e3)),
    ][seed % 3]
    h = 1e-5
    model = StiffNeuralODE(cfg["width"], 2e4, fp32_combine=fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scaler = torch.amp.GradScaler("cpu")
    batches = []
    for _ in range(cfg["steps"]):
        y0 = torch.rand(cfg["bs"], 3, generator=g)
        y0 = y0 / y0.sum(1, keepdim=True)          # mole fractions
        traj = true_kinetics(y0, cfg["n_steps"], h, cfg["k"])
        batches.append(((y0, cfg["n_steps"], h), traj))

    def loss_fn(pred, target):
        return F.mse_loss(pred.float(), target) * 100.0

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16, scaler=scaler)
