"""Evidential classifier (Sensoy et al. 2018): an MLP outputs Dirichlet concentrations
alpha = exp(logits) + 1 (exp evidence) and is trained with the Type-II-ML evidential loss
log(S) - log(alpha_y), using Adam at a learning rate far too high for it. On nearly separable
data the loss keeps rewarding more evidence for the true class; Adam moves every weight ~lr
per step, so the evidence logits climb steadily while the loss looks normal, until mid-run a
logit passes ~88, exp() overflows to inf and log(S) - log(alpha) = inf - inf = NaN.
fixed=True: only the Adam learning rate is lowered to a sane value.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Evidential deep learning (Sensoy et al. 2018, 'Evidential Deep Learning to Quantify "
          "Classification Uncertainty') with exp evidence; the overflow of exp evidence is why "
          "public EDL code clamps the logits before exp; logit growth under a too-high Adam lr as "
          "in Wortsman et al. 2023 (output logit divergence)")

D_IN, N_CLASSES = 16, 5


class EvidentialMLP(nn.Module):
    def __init__(self, d=D_IN, width=64, k=N_CLASSES):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, width), nn.ReLU(),
                                  nn.Linear(width, width), nn.ReLU())
        self.evidence = nn.Linear(width, k)

    def forward(self, x):
        logits = self.evidence(self.body(x))
        alpha = torch.exp(logits) + 1.0          # exp evidence -> Dirichlet concentrations
        return alpha


def evidential_log_loss(alpha, y):
    S = alpha.sum(-1)
    return (torch.log(S) - torch.log(alpha.gather(1, y[:, None]).squeeze(1))).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    centers = torch.randn(N_CLASSES, D_IN, generator=g) * 2.0
    steps, B = 300, 64
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLASSES, (B,), generator=g)
        x = centers[y] + torch.randn(B, D_IN, generator=g)
        batches.append((x, y))
    model = EvidentialMLP()
    lr = 1e-3 if fixed else 1.5e-2
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=evidential_log_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
