"""Reptile (Nichol, Achiam & Schulman 2018) on few-shot sinusoid regression, written as an
outer optimiser step on the Reptile direction; the outer Adam receives Reptile's meta step
size (1.0, annealed to 0 in the reference scripts) as its learning rate.

Mechanism: each training step is one meta-batch of sinusoid tasks.  The model's forward runs
k inner SGD steps per task on a copy of the weights (all tasks batched), and returns the
post-adaptation query predictions (via functional_call on the learner) together with a
zero-valued surrogate whose gradient is theta - mean(phi), so that loss.backward() +
optimizer.step() performs the Reptile outer update: with SGD(lr=eps) it is exactly
theta <- theta + eps * (mean(phi) - theta).  The user switched the outer optimiser to Adam
(beta1 = 0, as in the Reptile code's Adam variant) but kept `--meta-step 1.0` as Adam's lr.
Adam normalises the meta-gradient, so the first outer step moves every weight by ~1.0
(update/weight ratios of order 1 instead of ~1e-3).  The next meta-batch's inner SGD steps
start from these wrecked weights, overshoot and overflow: the loss is NaN from step 1 on.

ORIGIN: None -- a global optimiser setting, not a module.

Fix: Adam with lr 1e-3 for the outer loop (the scale Adam-based meta-optimisers use).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Nichol et al. 2018 'On First-Order Meta-Learning Algorithms' (Reptile, outer step "
          "size epsilon, sinusoid regression); openai/supervised-reptile scripts "
          "(--meta-step 1 --meta-step-final 0); forum posts confusing the meta step size with "
          "the outer Adam learning rate")


class SineNet(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def batched_mlp(params, names, x):
    """Run the learner's Linear/ReLU stack with a leading task dimension on every weight."""
    h = x
    for i, n in enumerate(names):
        h = torch.baddbmm(params[n + ".bias"].unsqueeze(1), h, params[n + ".weight"].transpose(1, 2))
        if i < len(names) - 1:
            h = torch.relu(h)
    return h


class Reptile(nn.Module):
    def __init__(self, hidden, inner_steps, inner_lr):
        super().__init__()
        self.learner = SineNet(hidden)
        self.inner_steps, self.inner_lr = inner_steps, inner_lr
        self.linears = [n for n, m in self.learner.named_modules() if isinstance(m, nn.Linear)]

    def adapt(self, xs, ys):
        T = xs.shape[0]
        params = {k: v.detach().unsqueeze(0).repeat(T, *[1] * v.dim()).requires_grad_(True)
                  for k, v in self.learner.named_parameters()}
        for _ in range(self.inner_steps):
            # sum over tasks of per-task mean losses -> per-task gradients in one backward
            loss = ((batched_mlp(params, self.linears, xs) - ys) ** 2).mean((1, 2)).sum()
            grads = torch.autograd.grad(loss, list(params.values()))
            params = {k: (p - self.inner_lr * g).detach().requires_grad_(True)
                      for (k, p), g in zip(params.items(), grads)}
        return {k: p.detach() for k, p in params.items()}

    def forward(self, xs, ys, xq):
        # xs, ys: (T, K, 1) support sets; xq: (T, Q, 1) query points
        with torch.enable_grad():
            adapted = self.adapt(xs, ys)
        with torch.no_grad():
            preds = torch.stack([functional_call(self.learner, {k: v[t] for k, v in adapted.items()}, (xq[t],))
                                 for t in range(xs.shape[0])])
        surrogate = 0.0
        for k, p in self.learner.named_parameters():
            d = (p - adapted[k].mean(0)).detach()          # theta - mean_t(phi_t)
            surrogate = surrogate + (p * d).sum() - (p * d).sum().detach()
        return preds, surrogate


def reptile_loss(out, yq):
    preds, surrogate = out
    return F.mse_loss(preds, yq) + surrogate


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=40, T=16, K=10, inner_steps=5, inner_lr=0.02, steps=200),
           dict(hidden=64, T=12, K=10, inner_steps=8, inner_lr=0.01, steps=180),
           dict(hidden=32, T=20, K=8, inner_steps=5, inner_lr=0.02, steps=220)][seed % 3]
    g = torch.Generator().manual_seed(9000 + seed)
    T, K = cfg["T"], cfg["K"]
    batches = []
    for _ in range(cfg["steps"]):
        A = 1.5 + 0.5 * torch.randn(T, 1, 1, generator=g)           # amplitude around 1.5
        ph = 0.8 + 0.4 * torch.randn(T, 1, 1, generator=g)          # phase around 0.8 rad
        c = 0.3 * torch.randn(T, 1, 1, generator=g)                 # per-task offset
        xs = -5 + 10 * torch.rand(T, K, 1, generator=g)
        xq = -5 + 10 * torch.rand(T, 20, 1, generator=g)
        batches.append(((xs, A * torch.sin(xs + ph) + c, xq), A * torch.sin(xq + ph) + c))

    torch.manual_seed(seed)
    model = Reptile(cfg["hidden"], cfg["inner_steps"], cfg["inner_lr"])
    lr = 1e-3 if fixed else 1.0              # BUG: Reptile meta-step size (1.0) passed as Adam lr
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.0, 0.999))
    return dict(model=model, optimizer=opt, loss_fn=reptile_loss, batches=batches,
                steps=cfg["steps"])
