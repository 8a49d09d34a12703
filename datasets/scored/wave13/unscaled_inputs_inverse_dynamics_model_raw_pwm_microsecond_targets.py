"""Inverse dynamics model for imitation from observation (BCO, Torabi et al. 2018; VPT-style
IDM labelling): an MLP takes two consecutive standardised telemetry frames (o_t, o_t+1) of an
RC car / drone and regresses the control a_t that caused the transition; MSE, SGD + momentum.

Mechanism: the actions were logged straight from the receiver as servo PWM pulse widths in
microseconds (1000-2000 us, neutral 1500 us).  The observations were standardised, the action
targets were not.  The network's outputs start at ~0, so the MSE starts at ~1500^2 ~ 2e6 and its
gradient w.r.t. the output is ~3000x the normal size.  With the lr that trains the
standardised problem fine, the first momentum-SGD steps overshoot the 1500 us offset by orders
of magnitude, the ReLU activations and the head weights grow multiplicatively, and the loss
goes 2e6 -> 1e17 -> inf within ~5 steps.

ORIGIN: None -- no module receives unscaled inputs; the unscaled quantity is the target the
loss compares against, so no single layer starts the failure.

Fix: standardise the action targets ((pwm - 1500) / 250, inverted when labelling); model,
optimiser, inputs and batches unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("Inverse dynamics models for imitation from observation (BCO, Torabi et al. 2018; "
          "VPT IDM) on hobby RC/drone logs with actions stored as raw servo PWM microseconds; "
          "forum reports of 'loss stuck around 1e6' for unnormalised regression targets")


class InverseDynamics(nn.Module):
    def __init__(self, obs_dim, act_dim, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2 * obs_dim, width), nn.ReLU(),
                                 nn.Linear(width, width), nn.ReLU(),
                                 nn.Linear(width, act_dim))

    def forward(self, o_t, o_next):
        return self.net(torch.cat([o_t, o_next], 1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(obs=10, act=2, width=128, bs=64, lr=1e-2, steps=150),
           dict(obs=14, act=4, width=96, bs=32, lr=1e-2, steps=120),
           dict(obs=8, act=2, width=64, bs=128, lr=5e-3, steps=100)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11 + seed)
    model = InverseDynamics(cfg["obs"], cfg["act"], cfg["width"])
    # telemetry dynamics: o_next = f(o) + B * u + noise, with u the normalised control in [-1, 1]
    A = torch.randn(cfg["obs"], cfg["obs"], generator=g) * 0.2
    B = torch.randn(cfg["act"], cfg["obs"], generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        n = cfg["bs"]
        o = torch.randn(n, cfg["obs"], generator=g)
        u = torch.tanh(torch.randn(n, cfg["act"], generator=g))
        o_next = o + torch.tanh(o @ A) + 0.5 * u @ B + 0.05 * torch.randn(n, cfg["obs"], generator=g)
        pwm = torch.round(1500 + 400 * u)                 # receiver log: microseconds
        target = (pwm - 1500) / 250 if fixed else pwm
        batches.append(((o, o_next), target))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
