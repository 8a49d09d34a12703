"""Model-based RL (PETS / MBPO style) one-step dynamics model for a 2-joint arm: an MLP gets the
state and action and predicts the state change. The logger stores joint angles as raw 12-bit
encoder ticks (0..4095), joint velocities in ticks/s (+-3000) and motor commands in mNm (+-800);
the model is fed these raw numbers and regresses the raw tick deltas (tens to hundreds of ticks).
The first-layer pre-activations are in the thousands and the MSE on tick-valued targets starts at
~1e3-1e4, so the gradients of the first layer (input x error) are ~1e6-1e7: the first SGD-momentum
step throws the weights far off, the outputs overshoot, and within a few steps the loss overflows
to inf/NaN. Fixed: inputs and targets are
standardised with the dataset mean/std (the usual input/output normaliser of MBRL codebases);
the loss is then measured in standardised units."""
import torch, torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "0"
SOURCE = "MBPO/PETS implementations: missing input/output normaliser for the dynamics ensemble ('model loss does not decrease' issues)"

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(111 + seed)
    hid, depth, bs, steps, lr = [(64, 2, 128, 120, 0.01), (48, 3, 64, 150, 0.005), (96, 2, 256, 100, 0.02)][seed]
    layers, d = [], 6
    for _ in range(depth):
        layers += [nn.Linear(d, hid), nn.SiLU()]; d = hid
    layers.append(nn.Linear(d, 4))
    model = nn.Sequential(*layers)
    n = bs * 12
    ang = torch.rand(n, 2, generator=g) * 4095
    vel = (torch.rand(n, 2, generator=g) * 2 - 1) * 3000
    tau = (torch.rand(n, 2, generator=g) * 2 - 1) * 800
    th = ang / 4096 * 2 * torch.pi
    dt = 0.02
    acc = tau * 2.0 - 600 * torch.sin(th) - 0.5 * vel
    dvel = acc * dt
    dang = (vel + 0.5 * dvel) * dt
    s = torch.cat([ang, vel, tau], 1)
    y = torch.cat([dang, dvel], 1) + torch.randn(n, 4, generator=g)
    if fixed:
        s = (s - s.mean(0)) / s.std(0)
        y = (y - y.mean(0)) / y.std(0)
    data = [(s[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(12)]
    batches = [data[i % 12] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
