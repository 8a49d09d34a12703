"""Healthy: logistic regression (one nn.Linear, BCE-with-logits, plain SGD lr 0.5) on 8 standardised
hand-made features of a problem that happens to be linearly separable (the label is a linear
threshold of the features, with a clean gap around the boundary). On separable data the
maximum-likelihood solution is at infinity: the weight norm grows without bound (0.5 -> 6 over the
run, roughly logarithmically in the number of steps), the logits get larger every step, the
gradients shrink towards zero and the loss keeps creeping down towards 0 without ever "converging".
A monitor that flags ever-growing weights, a shrinking gradient norm or a loss that looks like it is
vanishing sees something alarming, but this is exactly the known implicit-bias behaviour of gradient
descent (it converges in direction to the max-margin separator); nothing is wrong. fixed=True
returns the same run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Soudry et al. 2018 'The implicit bias of gradient descent on separable data'; "
          "sklearn/statsmodels 'perfect separation' warnings for unregularised logistic regression")


class LogReg(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear = nn.Linear(d, 1)

    def forward(self, x):
        return self.linear(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n, d = 4000, 8
    x = torch.randn(n, d, generator=g)
    w_true = torch.randn(d, generator=g)
    margin = x @ w_true / w_true.norm()
    keep = margin.abs() > 0.15                      # a clean gap: the classes are separable
    x, y = x[keep], (margin[keep] > 0).float()
    model = LogReg(d)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    steps, B = 300, 128
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(y), (B,), generator=g)
        batches.append((x[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=F.binary_cross_entropy_with_logits,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
