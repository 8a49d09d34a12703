"""Healthy hard negative: gradual magnitude pruning (Zhu & Gupta 2017) of a ReLU MLP classifier with
torch.nn.utils.prune.global_unstructured, driven by the optimizer wrapper (as sparse-training libraries
do: the mask update runs right after optimizer.step()). Global sparsity jumps to 50%, 75%, 88% and 94% at
four scheduled steps; each jump removes weights the net relies on, so the loss spikes (the last ones well above
the pre-prune level), most weights and many hidden activations are exactly zero, yet the remaining weights
recover every time and the run ends far below its start. Nothing is broken: fixed=True is the same run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import prune

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Zhu & Gupta 2017 'To prune, or not to prune' gradual magnitude pruning; PyTorch pruning "
          "tutorial (prune.global_unstructured); sparse_learning / rigl-torch style optimizer wrappers that "
          "update masks after optimizer.step(); the characteristic post-prune loss spikes that recover")

D_IN = 24
HIDDEN = 256
N_CLASSES = 10
BATCH = 128
STEPS = 320
PRUNE_AT = {60: 0.5, 110: 0.5, 160: 0.5, 210: 0.5}   # fraction of the remaining weights removed


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(D_IN, HIDDEN), nn.ReLU(),
            nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
            nn.Linear(HIDDEN, N_CLASSES),
        )

    def forward(self, x):
        return self.net(x)


class PruningAdam(torch.optim.Optimizer):
    """Adam whose step() also applies a gradual global-magnitude pruning schedule to the model."""

    def __init__(self, model, lr, schedule):
        super().__init__(model.parameters(), dict(lr=lr))
        self.inner = torch.optim.Adam(model.parameters(), lr=lr)
        self.param_groups = self.inner.param_groups
        self.inner.state = self.state
        self.targets = [(m, "weight") for m in model.modules() if isinstance(m, nn.Linear)]
        self.schedule = schedule
        self.t = 0

    @torch.no_grad()
    def step(self, closure=None):
        self.inner.step()
        self.t += 1
        if self.t in self.schedule:
            prune.global_unstructured(self.targets, pruning_method=prune.L1Unstructured,
                                      amount=self.schedule[self.t])


def _make_batches(seed):
    g = torch.Generator().manual_seed(seed)
    # labels from a random teacher network: learnable, not linearly separable
    w1 = torch.randn(D_IN, 64, generator=g) / D_IN ** 0.5
    w2 = torch.randn(64, N_CLASSES, generator=g) / 8.0
    batches = []
    for _ in range(STEPS):
        x = torch.randn(BATCH, D_IN, generator=g)
        logits = torch.tanh(x @ w1 * 1.5) @ w2 * 4.0
        y = logits.argmax(1)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = MLP()
    optimizer = PruningAdam(model, lr=2e-3, schedule=PRUNE_AT)
    return dict(model=model, optimizer=optimizer, loss_fn=F.cross_entropy,
                batches=_make_batches(seed), steps=STEPS, amp_dtype=None, scaler=None)
