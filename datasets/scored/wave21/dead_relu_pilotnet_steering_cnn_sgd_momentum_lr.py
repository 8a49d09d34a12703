"""NVIDIA PilotNet (DAVE-2) end-to-end steering CNN, scaled down: 3 strided convs + FC
100-50-10 with ReLU, trained with SGD + Nesterov momentum on camera frames to regress the
steering angle, with a learning rate copied from a BatchNorm'd ResNet recipe (0.3).

Mechanism: the first few momentum steps are far too large for this norm-free net; the
update drives the pre-activations of the narrow FC layers strongly negative for every
input, so the ReLUs after fc output 0 for the whole data set.  Their gradients are then
exactly zero, nothing can revive them, the steering output collapses to a constant
(the bias) and the loss plateaus at the variance of the steering angle.
ORIGIN: the ReLU of the first FC layer (fc.1), whose units all die first and cut the
gradient to everything below.
Fix: lr = 0.01 (same optimizer, same momentum).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "fc.1"
SOURCE = "PilotNet / behavioural-cloning Udacity simulator threads: steering prediction constant, ReLUs dead after too-high SGD learning rate"


class PilotNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, c, 5, stride=2), nn.ReLU(),
            nn.Conv2d(c, int(1.5 * c), 5, stride=2), nn.ReLU(),
            nn.Conv2d(int(1.5 * c), 2 * c, 3, stride=1), nn.ReLU(),
        )
        self.flat = nn.Flatten()
        self.fc = nn.Sequential(nn.LazyLinear(100), nn.ReLU(), nn.Linear(100, 50), nn.ReLU(),
                                nn.Linear(50, 10), nn.ReLU(), nn.Linear(10, 1))

    def forward(self, x):
        return self.fc(self.flat(self.features(x))).squeeze(-1)


def _batch(g, B, H, W):
    img = torch.rand(B, 3, H, W, generator=g) * 0.2
    offset = torch.randint(4, W - 4, (B,), generator=g)
    for i in range(B):
        c = int(offset[i])
        for r in range(H):
            cc = min(W - 1, max(0, c + (r - H // 2) // 3))
            img[i, :, r, cc] = 1.0
    x = (img - 0.5) / 0.25
    y = (offset.float() - W / 2) / (W / 4)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    c, lr, B = [(16, 0.3, 12), (16, 0.4, 12), (20, 0.5, 12)][seed % 3]
    if fixed:
        lr = 0.01
    torch.manual_seed(seed)
    H, W = 32, 48
    model = PilotNet(c)
    model(torch.zeros(1, 3, H, W))  # materialise the lazy layer
    g = torch.Generator().manual_seed(5000 + seed)
    steps = 120
    batches = [_batch(g, B, H, W) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
