"""'Linear regression from scratch' written the tutorial way: a module holding nn.Parameter weight and
bias, y_hat = x @ w + b, MSE, SGD with Nesterov momentum 0.9. The lr=0.5 came from the 1-feature toy
example where it converged quickly. Here the 12 standardised features are strongly correlated
(they are noisy readings of three latent factors), so the largest Hessian eigenvalue of the MSE is
~10-12 instead of 2, and with Nesterov momentum 0.9 the iteration is only stable for lr of
order 0.1-0.3. At 0.5 the component of w along the top eigenvector flips sign and
grows by a factor of several per step: the loss grows geometrically to inf and NaN. The features
and targets are properly scaled; only the step size is wrong. Fix: lr=0.02.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("'linear regression from scratch in PyTorch' tutorials (nn.Parameter w, b + SGD); divergence of gradient "
          "descent when lr > 2/lambda_max (LeCun et al. 'Efficient BackProp'; Goh 2017 'Why Momentum Really Works')")

D = 12


class LinearRegression(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(d, 1))
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return (x @ self.weight + self.bias).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    mix = torch.randn(3, D, generator=g)
    w_true = torch.randn(3, generator=g)

    def sample(n):
        z = torch.randn(n, 3, generator=g)
        x = z @ mix + 0.3 * torch.randn(n, D, generator=g)
        y = z @ w_true + 0.3 * torch.randn(n, generator=g)
        return x, y

    xs, ys = sample(4096)
    mu, sd = xs.mean(0), xs.std(0)
    ymu, ysd = ys.mean(), ys.std()
    steps = 120
    batches = []
    for _ in range(steps):
        x, y = sample(64)
        batches.append(((x - mu) / sd, (y - ymu) / ysd))
    model = LinearRegression(D)
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else 0.5, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.mse_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
