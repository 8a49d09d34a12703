"""Digit-like 8x8 classifier, a hand-written nn.Module with functional activations
(fc1 -> F.relu -> fc2 -> F.relu -> out). lr=0.7 was tuned with plain SGD, where it trains well; the
author then switched on momentum=0.9 'to converge faster' and kept the lr, so the effective step
lr/(1-momentum) became 7. After a promising start the accumulated velocity overshoots (a loss spike
around step 20) and drives the biases and incoming weights of fc2 strongly negative; fc2 reads
non-negative inputs (the ReLU outputs of fc1, most of which die too), so once its pre-activations
are negative for every image all 16 units output exactly 0 with zero gradient, the classifier sees
a constant input and the loss sits at ~log(10) for the rest of the run, with no NaN.
Fix: lr=0.07 with the same momentum (effective step 0.7).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "fc2"
SOURCE = ("CS231n notes 'dying ReLU' ('with a high learning rate as much as 40% of the network can be dead'); "
          "adding momentum without lowering the lr multiplies the effective step by 1/(1-beta)")


class DigitMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 16)
        self.out = nn.Linear(16, 10)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.relu(self.fc2(h))
        return self.out(h)


def _digits(g, templates, B):
    cls = torch.randint(0, 10, (B,), generator=g)
    img = templates[cls] * (0.7 + 0.3 * torch.rand(B, 1, 1, generator=g)) + 0.1 * torch.rand(B, 8, 8, generator=g)
    return img.reshape(B, 64), cls


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    templates = (torch.rand(10, 8, 8, generator=g) < 0.3).float()
    model = DigitMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.07 if fixed else 0.7, momentum=0.9)
    steps = 150
    batches = [_digits(g, templates, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
