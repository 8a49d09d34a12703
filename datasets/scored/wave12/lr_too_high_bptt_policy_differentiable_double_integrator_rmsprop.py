"""Policy optimisation by back-propagation through a differentiable simulator (the analytic policy-
gradient / differentiable-MPC pattern): a small MLP policy drives a damped, torque-limited
double integrator (a cart on a rail) from random initial states to random set-points; the
forward pass unrolls 40 simulator steps and returns the trajectory as a dict, and the loss is
the mean quadratic tracking + velocity + effort cost. Gradients reach the policy through the
whole unrolled horizon, so the loss is a long product of Jacobians and is very sensitive to the
policy's gains. RMSprop at lr=0.1 (the value used for the one-step supervised pre-training of
the same policy, kept for the unrolled objective) makes the first normalised updates (~10*lr = 1
per weight) throw the policy into a saturated regime: it either pins the actuator at +-U_MAX and
drives the cart away from every set-point (cost jumps from ~1 to ~40 and stays there) or keeps
overshooting between saturated policies at a cost above its starting value. No NaN, no overflow:
the loss simply never improves. The fixed run uses lr=5e-4."""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Backprop-through-dynamics policy learning (e.g. Nguyen & Widrow 1990 truck backer-upper, "
          "PILCO-style analytic gradients, differentiable-MPC tutorials); learning rate tuned on "
          "a one-step problem reused on a long unrolled horizon")

DT, H, U_MAX, DAMP = 0.1, 40, 2.0, 0.2


class ClosedLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                                    nn.Linear(32, 1))

    def forward(self, x0, v0, target):
        x, v = x0, v0
        xs, vs, us = [], [], []
        for _ in range(H):
            u = U_MAX * torch.tanh(self.policy(torch.stack([x - target, v], 1)).squeeze(1))
            v = v + DT * (u - DAMP * v)
            x = x + DT * v
            xs.append(x); vs.append(v); us.append(u)
        return {"pos": torch.stack(xs, 1), "vel": torch.stack(vs, 1), "u": torch.stack(us, 1)}


def make_batch(g, n):
    x0 = 2 * torch.rand(n, generator=g) - 1
    v0 = 0.5 * torch.randn(n, generator=g)
    target = 2 * torch.rand(n, generator=g) - 1
    return (x0, v0, target), target


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ClosedLoop()
    steps = 150
    batches = [make_batch(g, 64) for _ in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=5e-4 if fixed else 0.1)

    def loss_fn(traj, target):
        err = traj["pos"] - target.unsqueeze(1)
        return (err ** 2).mean() + 0.1 * (traj["vel"] ** 2).mean() + 0.01 * (traj["u"] ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
