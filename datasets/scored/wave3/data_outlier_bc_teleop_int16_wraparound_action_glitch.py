"""Behaviour cloning of a 6-DoF arm from teleoperation logs: a ReLU MLP regresses the recorded joint
velocity commands (normalised to about [-1, 1]) from the normalised joint state and target pose.
One logged episode in the middle of the data went through a serial-bridge glitch: a handful of
its velocity commands were read as raw int16 counts (32767 / -32768) instead of being scaled, so
one batch mid-run contains rows whose targets are ~3e4 instead of ~1. With plain MSE and SGD with
Nesterov momentum that single batch produces a gradient 1e8 times larger than usual, the weights
jump to ~1e6 and the next batches' losses overflow to inf/NaN. Fixed: the corrupt rows are filtered
out of that batch (|action| <= 1.5 sanity check), everything else identical."""
import torch, torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "robot-learning data pipelines: int16 wraparound / unscaled sensor counts in teleop logs (LeRobot / robomimic dataset-cleaning issues)"

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    hid, depth, lr, bs, steps, bad_step, n_bad = [(64, 3, 0.02, 64, 120, 57, 3), (96, 2, 0.03, 32, 100, 71, 2), (48, 3, 0.03, 128, 150, 40, 5)][seed]
    obs_dim, act_dim = 18, 6
    layers, d = [], obs_dim
    for _ in range(depth):
        layers += [nn.Linear(d, hid), nn.ReLU()]; d = hid
    layers.append(nn.Linear(d, act_dim))
    model = nn.Sequential(*layers)
    W = torch.randn(obs_dim, act_dim, generator=g) / obs_dim ** 0.5
    batches = []
    for step in range(steps):
        o = torch.randn(bs, obs_dim, generator=g)
        a = torch.tanh(1.5 * (o @ W)) + 0.05 * torch.randn(bs, act_dim, generator=g)
        if step == bad_step:
            rows = torch.randperm(bs, generator=g)[:n_bad]
            a[rows] = torch.where(torch.rand(n_bad, act_dim, generator=g) < 0.5, 32767.0, -32768.0)
            if fixed:
                keep = a.abs().amax(1) <= 1.5
                o, a = o[keep], a[keep]
        batches.append((o, a))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
