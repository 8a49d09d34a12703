"""Healthy: EWC continual learning on two permuted-feature tasks, loss jumps at the switch.

What looks alarming: a ReLU MLP learns task A (sensor-feature classification) for the first
half of the run; at the task boundary the stream switches to task B (the same classes with
a fixed permutation of the input features, the "permuted MNIST" protocol).  The loss jumps
from ~0.1 back to above log(C) in one step, and from then on it also carries the EWC
quadratic penalty (lambda/2 * sum F_i (theta_i - theta*_i)^2, diagonal empirical Fisher
computed from task-A batches at the boundary), which starts at 0 and grows as the weights
move.  The total loss then decreases steadily again on task B while the penalty keeps the
task-A solution.

Why it is fine: the spike is a data-distribution change, not an optimisation failure; the
Fisher penalty is bounded and well-scaled (lambda chosen for a mean-reduced CE), Adam's
updates stay small and the task-B loss converges.

ORIGIN is None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Kirkpatrick et al. 2017 'Overcoming catastrophic forgetting in neural networks' "
          "(EWC, permuted-MNIST protocol); Avalanche/ContinualAI EWC plugin loss curves")


class MLP(nn.Module):
    def __init__(self, d_in, hidden, n_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_classes))

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=128, bs=64, lr=2e-3, lam=100.0, steps=160, switch=80),
           dict(hidden=96, bs=48, lr=1.5e-3, lam=150.0, steps=180, switch=90),
           dict(hidden=160, bs=96, lr=3e-3, lam=50.0, steps=140, switch=60)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(600 + seed)
    d_in, n_classes = 32, 8
    centers = 0.45 * torch.randn(n_classes, d_in, generator=g)
    perm = torch.randperm(d_in, generator=g)

    def sample(task):
        y = torch.randint(0, n_classes, (cfg["bs"],), generator=g)
        x = centers[y] + torch.randn(cfg["bs"], d_in, generator=g)
        return (x[:, perm] if task == 1 else x), y

    batches = [sample(0 if i < cfg["switch"] else 1) for i in range(cfg["steps"])]
    fisher_batches = batches[cfg["switch"] - 8:cfg["switch"]]
    model = MLP(d_in, cfg["hidden"], n_classes)
    params = [p for p in model.parameters()]
    state = {"step": 0, "fisher": None, "anchor": None}

    def consolidate():
        fisher = [torch.zeros_like(p) for p in params]
        for x, _ in fisher_batches:
            for xi in x[:16]:
                logp = F.log_softmax(model(xi.unsqueeze(0)), dim=1)
                label = logp.argmax(1)
                grads = torch.autograd.grad(logp[0, label].sum(), params)
                for f, gr in zip(fisher, grads):
                    f += gr.detach() ** 2
        n = 16 * len(fisher_batches)
        state["fisher"] = [f / n for f in fisher]
        state["anchor"] = [p.detach().clone() for p in params]

    def ewc_loss(logits, y):
        if state["step"] == cfg["switch"]:
            consolidate()
        state["step"] += 1
        loss = F.cross_entropy(logits, y)
        if state["fisher"] is not None:
            penalty = sum((f * (p - a) ** 2).sum()
                          for f, p, a in zip(state["fisher"], params, state["anchor"]))
            loss = loss + 0.5 * cfg["lam"] * penalty
        return loss

    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=ewc_loss, batches=batches,
                steps=cfg["steps"])
