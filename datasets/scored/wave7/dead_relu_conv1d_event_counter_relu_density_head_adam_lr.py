"""A 1-D convolutional event counter (e.g. step or heartbeat counting from a wearable's two-channel
signal) in the density-map style of crowd counting: a small dilated conv stack predicts a density per
time step, made non-negative by a final ReLU, and the predicted count is its sum over the window; the
loss is the squared count error. The density head is initialised small (N(0, 0.01), CSRNet style) and
the model is trained with Adam at lr = 3e-2. Adam's first steps move every parameter by ~lr in the
sign of its gradient, and the 1x1 density head reads non-negative ReLU features, so all of its input
weights move together: the first step overshoots the count (summed over 96 time steps), the
correction drives the head's pre-activation below zero at every time step of every window, and from
step 2 on the density ReLU outputs 0 everywhere. The predicted count is 0 for every input, no
gradient flows back through the ReLU, and the loss sits at E[count^2] for the rest of the run. With
lr = 1e-3 the head stays alive and the counter learns."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "density"
SOURCE = ("density-map counting with a ReLU output (Lempitsky & Zisserman 2010; CSRNet-style heads); "
          "dying ReLU after large early Adam steps")

T, C = 96, 16


class EventCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(2, C, kernel_size=5, padding=2), nn.ReLU(),
            nn.Conv1d(C, C, kernel_size=5, padding=4, dilation=2), nn.ReLU(),
        )
        self.density = nn.Conv1d(C, 1, kernel_size=1)
        nn.init.normal_(self.density.weight, std=0.01)    # CSRNet-style small init of the density head
        nn.init.zeros_(self.density.bias)
        self.act = nn.ReLU()

    def forward(self, x):
        d = self.act(self.density(self.features(x)))     # (B, 1, T) non-negative density
        return d.sum((1, 2))


def make_batch(g, bs):
    n_events = torch.randint(0, 7, (bs,), generator=g)
    sig = 0.3 * torch.randn(bs, 2, T, generator=g)
    t = torch.arange(T, dtype=torch.float32)
    for b in range(bs):
        pos = torch.randperm(T - 8, generator=g)[: n_events[b]] + 4
        for p in pos.tolist():
            sig[b, 0] += 2.0 * torch.exp(-0.5 * ((t - p) / 1.5) ** 2)
            sig[b, 1] -= 1.0 * torch.exp(-0.5 * ((t - p - 1) / 2.0) ** 2)
    return sig, n_events.float()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = EventCounter()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 3e-2)
    steps = 120
    batches = [make_batch(g, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
