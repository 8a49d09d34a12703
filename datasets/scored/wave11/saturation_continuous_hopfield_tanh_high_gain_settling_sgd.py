"""Continuous (graded-response) Hopfield network for pattern completion, trained by backprop through
its settling dynamics with SGD+momentum: the corrupted pattern x (30% of units unknown = 0, a few
flipped) is clamped as an external field and the state is iterated s <- tanh(gain * (W s + b + x))
for 6 steps; the loss is the MSE between the settled state and the clean stored pattern. Following
Hopfield (1984)'s remark that the high-gain limit recovers the binary network, the gain is set to
20. From the first iteration ~90% of the pre-activations have |gain * h| > 3, so tanh' is ~0 there,
while the few units near zero pass gradients multiplied by up to gain = 20 at every settling step:
the coupling-weight gradient is ~50-300x larger than at gain 1, the first updates blow W up (norm 5
-> ~1000), and after ~30 steps every unit is pinned at +-1 with zero derivative. The settled states
are now wrong on most units and stay that way: the loss climbs from ~0.8 to ~1.9 and sits there,
flat, with no NaN. The fixed run uses gain 1 (moderate pre-activations); everything else is
identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "coupling"
SOURCE = ("Hopfield 1984 graded-response network, high-gain limit; tanh saturation / vanishing "
          "gradients (Glorot & Bengio 2010) when pre-activations are scaled up")

N, P, T_SETTLE = 64, 6, 6


class HopfieldSettle(nn.Module):
    def __init__(self, gain):
        super().__init__()
        self.coupling = nn.Linear(N, N)
        self.gain = gain

    def forward(self, x, known):
        s = x
        for _ in range(T_SETTLE):
            s = torch.tanh(self.gain * (self.coupling(s) + x))
        return s, known


def loss_fn(out, y):
    s, known = out
    return F.mse_loss(s, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    patterns = torch.randint(0, 2, (P, N), generator=g).float() * 2 - 1
    model = HopfieldSettle(gain=1.0 if fixed else 20.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    steps, B = 200, 64
    batches = []
    for _ in range(steps):
        z = torch.randint(0, P, (B,), generator=g)
        clean = patterns[z]
        known = (torch.rand(B, N, generator=g) > 0.3).float()
        flip = torch.where(torch.rand(B, N, generator=g) < 0.05, -1.0, 1.0)
        x = clean * flip * known
        batches.append(((x, known), clean))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
