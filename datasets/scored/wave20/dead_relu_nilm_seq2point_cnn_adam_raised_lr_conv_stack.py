"""Non-intrusive load monitoring (NILM) with a seq2point CNN (Zhang et al., AAAI 2018):
a window of standardised aggregate mains power -> the appliance power at the window
midpoint, via 5 Conv1d+ReLU layers and a wide ReLU dense layer.

Mechanism: the user raised Adam's lr from the paper's 1e-3 to a "faster" 4e-2..5e-2 (the
seq2point reference code uses lr 1e-3).  Adam moves every weight by ~lr per step regardless of
the gradient's size, so the first few oversized updates (loss spikes to 3-25x) push the
biases/filters of the upper conv layers negative; within ~10-30 steps every channel and
position of the last conv ReLU is zero for every window, nothing reaches the dense layer
or flows back into the conv stack, and the model collapses to a constant output: the MSE
plateaus at the target variance.

ORIGIN: `conv.9`, the ReLU of the last conv layer, which ends 100% dead on every seed and
cuts the network in two (the dense ReLU keeps only a handful of bias-driven units).

Fix: lr 1e-3 (the paper's value); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "conv.9"
SOURCE = "seq2point NILM (Zhang et al. 2018) reimplementations trained with a raised Adam lr; 'seq2point predicts constant output' reports; Adam high-lr dying ReLU pattern"

_CFG = {0: dict(win=27, hid=256, lr=4e-2, bs=24, steps=60),
        1: dict(win=25, hid=320, lr=4e-2, bs=24, steps=70),
        2: dict(win=37, hid=192, lr=5e-2, bs=40, steps=50)}


def _batch(g, n, win):
    # appliance: kettle-like on/off load riding on a noisy base load
    on = (torch.rand(n, 1, generator=g) < 0.4).float()
    start = torch.randint(0, win, (n, 1), generator=g)
    length = torch.randint(5, win, (n, 1), generator=g)
    t = torch.arange(win).view(1, win)
    act = ((t >= start) & (t < start + length)).float() * on
    app = act * (2.0 + 0.2 * torch.randn(n, 1, generator=g))
    base = 0.5 + 0.3 * torch.rand(n, 1, generator=g) + 0.1 * torch.randn(n, win, generator=g)
    mains = app + base
    x = ((mains - 1.2) / 0.9).unsqueeze(1)
    y = (app[:, win // 2: win // 2 + 1] - 0.5) / 0.9
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    w = c["win"]
    model = nn.Sequential()
    model.add_module("conv", nn.Sequential(
        nn.Conv1d(1, 12, 9, padding=4), nn.ReLU(),
        nn.Conv1d(12, 12, 7, padding=3), nn.ReLU(),
        nn.Conv1d(12, 16, 5, padding=2), nn.ReLU(),
        nn.Conv1d(16, 16, 5, padding=2), nn.ReLU(),
        nn.Conv1d(16, 16, 5, padding=2), nn.ReLU()))
    model.add_module("flat", nn.Flatten())
    model.add_module("dense", nn.Sequential(nn.Linear(16 * w, c["hid"]), nn.ReLU()))
    model.add_module("out", nn.Linear(c["hid"], 1))
    lr = 1e-3 if fixed else c["lr"]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_batch(g, c["bs"], w) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=c["steps"])
