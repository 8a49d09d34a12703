"""Tyre-road friction estimator for an ESC / ABS function: per-wheel signals (wheel angular
speed, vehicle longitudinal speed from the fusion filter, drive/brake torque, estimated vertical
load, longitudinal acceleration) go through a physics layer that forms the longitudinal slip
ratio kappa = (w*R - v_x) / v_x and the normalised force Fx/Fz; an MLP maps these (plus the raw
signals) to the peak friction coefficient mu of the road surface (dry / wet / snow / ice),
L1 loss, Adagrad.

Mechanism: the slip ratio is computed with a plain division by the vehicle speed.  The training
logs are mostly free-flowing city and highway driving (v_x >= 3 m/s) and the run is calm; when a
stop-and-go segment comes in (its position varies with the seed) the batch contains frames at
standstill where v_x == 0 and w*R == 0, so kappa = 0/0 = NaN (and x/0 = inf for creeping
frames).  The NaN goes through the MLP and the loss is non-finite.  The data is legitimate
(vehicles do stand still); the operation is unsafe.

ORIGIN: ``slip`` - the physics layer that performs the division.

Fix: guard the denominator, kappa = (w*R - v_x) / v_x.clamp_min(0.5 m/s) (the usual low-speed
regularisation of the slip definition); everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "slip"
SOURCE = ("Known pattern: slip ratio (wR - v)/v is singular at standstill; vehicle-dynamics texts "
          "regularise the denominator at low speed (Pacejka, 'Tire and Vehicle Dynamics'); "
          "0/0 -> NaN in a physics-informed layer")


class SlipLayer(nn.Module):
    def __init__(self, radius, eps):
        super().__init__()
        self.radius = radius
        self.eps = eps

    def forward(self, x):
        w, vx, tq, fz, ax = x.unbind(-1)
        den = vx.clamp_min(self.eps) if self.eps > 0 else vx
        kappa = (w * self.radius - vx) / den
        fx_fz = (tq / self.radius) / fz
        return torch.stack([kappa * 10.0, fx_fz, vx / 30.0, ax / 9.81, fz / 4000.0], -1)


class FrictionNet(nn.Module):
    def __init__(self, width, eps):
        super().__init__()
        self.slip = SlipLayer(0.31, eps)
        self.mlp = nn.Sequential(nn.Linear(5, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
                                 nn.Linear(width, 1))

    def forward(self, x):
        return self.mlp(self.slip(x)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [48, 64, 96][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    bs = [64, 96, 48][seed % 3]
    steps = 140
    stop_go_step = [45, 70, 95][seed % 3]
    model = FrictionNet(width, 0.5 if fixed else 0.0)

    R = 0.31
    mus = torch.tensor([1.0, 0.7, 0.35, 0.12])
    batches = []
    for step in range(steps):
        surf = torch.randint(0, 4, (bs,), generator=g)
        mu = mus[surf] * (1 + 0.05 * torch.randn(bs, generator=g))
        vx = 3.0 + torch.rand(bs, generator=g) * 30.0
        fz = 3500 + 800 * torch.rand(bs, generator=g)
        demand = torch.rand(bs, generator=g) * 2 - 1                 # -1 brake .. +1 drive
        fx = demand * mu * fz * 0.8
        # magic-formula-like inverse: slip grows sharply as |Fx| approaches mu*Fz
        use = (fx / (mu * fz)).clamp(-0.95, 0.95)
        kappa = 0.08 * torch.atanh(use) / (mu + 0.1) * 0.3
        if step == stop_go_step:
            k = bs // 3
            vx[:k] = torch.where(torch.arange(k) % 2 == 0, torch.zeros(k), 0.05 * torch.rand(k, generator=g))
            kappa[:k] = 0.0
        w = (1 + kappa) * vx / R
        if step == stop_go_step:
            w[:k:2] = 0.0
        tq = fx * R
        ax = fx / 1500.0 + 0.2 * torch.randn(bs, generator=g)
        x = torch.stack([w, vx, tq, fz, ax], -1)
        batches.append((x, mu))

    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
