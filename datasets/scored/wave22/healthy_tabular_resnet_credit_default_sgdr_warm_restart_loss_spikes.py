"""Healthy hard negative: a tabular ResNet (Gorishniy et al. 2021, "Revisiting deep learning models
for tabular data": Linear-BatchNorm-ReLU-Linear residual blocks) scoring probability of default
on standardised loan-application features, trained with SGD + Nesterov momentum under cosine
annealing with warm restarts (SGDR, Loshchilov & Hutter 2017), the schedule being stepped inside
the optimiser's step().

What looks alarming: a very large peak learning rate for SGD (0.5-0.6) and, at every restart, a
jump of the learning rate from ~1e-4 back to that peak: the BatchNorm'ed blocks take a few large
steps and the training loss bumps up for several iterations after a restart, a saw-tooth that
repeats every cycle, on top of sizeable batch-to-batch noise. The run is nevertheless healthy:
the loss trends down across cycles and the run ends at the bottom of a cycle.

ORIGIN: None (healthy).
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("SGDR / CosineAnnealingWarmRestarts saw-tooth training curves (loss spikes at each "
          "restart) on tabular ResNet credit-scoring baselines")


class ResBlock(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.net = nn.Sequential(nn.BatchNorm1d(d), nn.Linear(d, h), nn.ReLU(), nn.Linear(h, d))

    def forward(self, x):
        return x + self.net(x)


class TabResNet(nn.Module):
    def __init__(self, n_feat, d, h, n_blocks):
        super().__init__()
        self.inp = nn.Linear(n_feat, d)
        self.blocks = nn.Sequential(*[ResBlock(d, h) for _ in range(n_blocks)])
        self.out = nn.Sequential(nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, x):
        return self.out(self.blocks(self.inp(x))).squeeze(-1)


class SGDWarmRestarts(torch.optim.SGD):
    """SGD whose step() also advances a CosineAnnealingWarmRestarts schedule."""

    def __init__(self, params, lr, T_0):
        super().__init__(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=1e-4)
        self._sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(self, T_0=T_0, eta_min=1e-4)

    def step(self, closure=None):
        loss = super().step(closure)
        self._sched.step()
        return loss


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n_feat = [20, 16, 24][seed % 3]
    d = [64, 48, 64][seed % 3]
    n_blocks = [2, 3, 2][seed % 3]
    batch = [512, 384, 512][seed % 3]
    lr = [0.6, 0.5, 0.6][seed % 3]
    T_0 = [40, 50, 60][seed % 3]
    steps = 5 * T_0
    w = rng.normal(size=n_feat) / np.sqrt(n_feat)
    v = rng.normal(size=(n_feat, 4)) / np.sqrt(n_feat)

    def sample(b):
        x = rng.normal(size=(b, n_feat))
        logit = 2.5 * (x @ w) + 0.7 * np.sin(2 * (x @ v)).sum(1) - 1.0
        y = (logit + 0.3 * rng.normal(size=b) > 0).astype(np.float32)
        return torch.tensor(x, dtype=torch.float32), torch.tensor(y)

    batches = [sample(batch) for _ in range(steps)]
    model = TabResNet(n_feat, d, 2 * d, n_blocks)
    optimizer = SGDWarmRestarts(model.parameters(), lr=lr, T_0=T_0)
    loss_fn = nn.BCEWithLogitsLoss()
    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
