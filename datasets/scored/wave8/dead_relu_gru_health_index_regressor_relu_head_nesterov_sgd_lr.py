"""Bearing health-index regression from vibration windows: a GRU encoder (3 channels, 40 steps)
feeds a ReLU MLP head (head.0 Linear -> head.1 ReLU -> head.2 Linear -> head.3 ReLU -> output);
targets are the standardised health index. The author trains with SGD + Nesterov momentum at
lr=0.3, a value copied from a classification run of the same backbone whose cross-entropy
gradients are bounded. On the MSE head the first steps overshoot, the prediction swings past the
targets and back, and each swing drives more units of the last hidden ReLU layer (head.3) below
zero for every window. Within ~30 steps >95% of head.3 is silent, and by the end 100%: the
prediction is a constant, no gradient reaches head.0 or the GRU, and the loss sits at the target
variance (~1.0), finite throughout. The fix lowers the learning rate to 0.03 (same optimizer,
momentum, model and data)."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.3"
SOURCE = ("Known dying-ReLU pattern: large early SGD steps on a regression head (lr reused "
          "from a classification run) kill the last hidden ReLU layer; "
          "'network predicts the same value for every input' reports for RUL/health-index models.")

T, C, H = 40, 3, 32


class HealthRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(C, H, batch_first=True)
        self.head = nn.Sequential(nn.Linear(H, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                  nn.Linear(64, 1))

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1]).squeeze(-1)


def make_batch(g, B):
    t = torch.arange(T, dtype=torch.float32)
    sev = torch.rand(B, generator=g)  # fault severity in [0, 1]
    f0 = 0.2 + 0.1 * torch.rand(B, 1, generator=g)
    x = (0.8 * torch.sin(f0 * t)).unsqueeze(-1).repeat(1, 1, C)
    x = x + 0.3 * torch.randn(B, T, C, generator=g)
    period = torch.randint(5, 9, (B,), generator=g)
    for i in range(B):  # periodic impulses whose amplitude grows with the fault
        x[i, ::int(period[i]), 0] += 3.0 * sev[i]
        x[i, ::int(period[i]), 2] -= 2.0 * sev[i]
    hi = sev * 4.0 + 1.0  # health index 1 (healthy) .. 5 (failed)
    return x, (hi - 3.0) / 1.155  # standardised with the fleet mean / std


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = HealthRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.03 if fixed else 0.3, momentum=0.9,
                          nesterov=True)
    steps = 220
    batches = [make_batch(g, 32) for _ in range(steps)]

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
