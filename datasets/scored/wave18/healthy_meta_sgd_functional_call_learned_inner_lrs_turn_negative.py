"""Healthy: Meta-SGD (Li et al. 2017) -- MAML with a learned, per-parameter
inner-loop learning rate alpha -- for few-shot sinusoid regression, written
with torch.func.functional_call.  The forward pass takes
(support_x, support_y, query_x) for a meta-batch of tasks, adapts the fast
weights with one inner step  theta' = theta - alpha * grad  (second order,
create_graph=True) and returns the adapted predictions on the query points; the
outer Adam optimiser updates both theta and alpha.

Why it looks alarming: within a few dozen meta-steps 10-30% of the learned
inner "learning rates" alpha become *negative* (those parameters are moved up
the support-loss gradient in the inner loop) and others grow to 20-50 times
their initial value, so the effective inner-loop step looks unstable; the
per-meta-batch loss is noisy because task amplitudes vary 10x; the forward
pass itself calls torch.autograd.grad.

Why it is fine: negative / large per-parameter alphas are a known, benign
outcome of Meta-SGD (the outer loss, not the inner one, is what is optimised);
the adapted query loss decreases steadily well below its initial value and
nothing diverges.  Nothing needs fixing; build(fixed=True) returns the same run.
"""
import math

import torch
import torch.nn as nn
from torch.func import functional_call

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Li, Zhou, Chen & Li 2017 'Meta-SGD: Learning to Learn Quickly for Few-Shot "
          "Learning' (learned per-parameter inner lr, sinusoid regression); Finn et al. 2017 "
          "MAML sinusoid setup; torch.func.functional_call meta-learning examples")


class MetaSGD(nn.Module):
    def __init__(self, hidden, alpha0):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(1, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 1),
        )
        self.alpha = nn.ParameterDict({
            k.replace(".", "_"): nn.Parameter(torch.full_like(p, alpha0))
            for k, p in self.net.named_parameters()
        })

    def adapt_and_predict(self, xs, ys, xq):
        params = dict(self.net.named_parameters())
        loss = ((functional_call(self.net, params, (xs,)) - ys) ** 2).mean()
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        fast = {k: p - self.alpha[k.replace(".", "_")] * g
                for (k, p), g in zip(params.items(), grads)}
        return functional_call(self.net, fast, (xq,))

    def forward(self, sx, sy, qx):
        return torch.stack([self.adapt_and_predict(sx[t], sy[t], qx[t])
                            for t in range(sx.shape[0])])


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(hidden=40, alpha0=0.01, meta_bs=16, k=10, q=10, lr=3e-3, steps=150),
        dict(hidden=32, alpha0=0.02, meta_bs=20, k=5, q=15, lr=2e-3, steps=160),
        dict(hidden=48, alpha0=0.01, meta_bs=12, k=10, q=10, lr=3e-3, steps=140),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2017 + seed)
    model = MetaSGD(cfg["hidden"], cfg["alpha0"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    T = cfg["meta_bs"]
    for _ in range(cfg["steps"]):
        amp = 0.1 + 4.9 * torch.rand(T, 1, 1, generator=g)
        phase = math.pi * torch.rand(T, 1, 1, generator=g)
        sx = -5 + 10 * torch.rand(T, cfg["k"], 1, generator=g)
        qx = -5 + 10 * torch.rand(T, cfg["q"], 1, generator=g)
        batches.append(((sx, amp * torch.sin(sx - phase), qx), amp * torch.sin(qx - phase)))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
