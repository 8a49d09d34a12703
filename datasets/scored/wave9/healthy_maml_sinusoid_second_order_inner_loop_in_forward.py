"""MAML (Finn et al. 2017) on the sinusoid-regression benchmark (task-specific amplitude and phase on top of a
shared drift term), with the inner loop inside
the model's forward: given a tuple (support x, support y, query x) for a batch of tasks, the model
takes one inner SGD step on the support MSE with torch.autograd.grad(create_graph=True) (full
second-order MAML), then evaluates the adapted weights functionally on the query points; the outer
loss is the query MSE and the meta-optimiser is Adam. Things that look alarming but are normal:
backward runs through a gradient (Hessian-vector products), the loss is very noisy from batch to
batch because task amplitudes range over 0.1-5 (per-task MSE spans three orders of magnitude), and
the meta-gradient norms vary by ~10x. The meta-training is healthy: the post-adaptation query loss
falls well below its starting value."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Finn, Abbeel & Levine 2017 'Model-Agnostic Meta-Learning' sinusoid regression (second-order MAML)"

K_SHOT, N_QUERY, TASKS, STEPS, INNER_LR = 10, 10, 16, 200, 0.01


class MAMLRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(1, 40)
        self.l2 = nn.Linear(40, 40)
        self.l3 = nn.Linear(40, 1)

    @staticmethod
    def _f(x, p):
        h = F.relu(F.linear(x, p[0], p[1]))
        h = F.relu(F.linear(h, p[2], p[3]))
        return F.linear(h, p[4], p[5])

    def forward(self, xs, ys, xq):
        params = [self.l1.weight, self.l1.bias, self.l2.weight, self.l2.bias, self.l3.weight, self.l3.bias]
        preds = []
        for t in range(xs.shape[0]):
            inner = F.mse_loss(self._f(xs[t], params), ys[t])
            grads = torch.autograd.grad(inner, params, create_graph=True)
            adapted = [p - INNER_LR * g for p, g in zip(params, grads)]
            preds.append(self._f(xq[t], adapted))
        return torch.stack(preds)


def _tasks(g, n):
    amp = 0.1 + 4.9 * torch.rand(n, 1, 1, generator=g)
    phase = math.pi * torch.rand(n, 1, 1, generator=g)
    x = torch.rand(n, K_SHOT + N_QUERY, 1, generator=g) * 10 - 5
    y = amp * torch.sin(x - phase) + 2.0 * torch.tanh(0.5 * x)     # task-specific wave + shared drift
    return x[:, :K_SHOT], y[:, :K_SHOT], x[:, K_SHOT:], y[:, K_SHOT:]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(19000 + seed)
    model = MAMLRegressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = []
    for _ in range(STEPS):
        xs, ys, xq, yq = _tasks(g, TASKS)
        batches.append(((xs, ys, xq), yq))

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
