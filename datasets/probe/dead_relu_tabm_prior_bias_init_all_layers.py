"""TabM-mini (Gorishniy et al. 2024) binary classifier for an imbalanced tabular task (~5% positives):
k=8 members share a ReLU MLP backbone, member i sees x * r_i and has its own linear head; the loss is
the mean BCE over members. The init code applies the "prior bias" trick (bias = log(p / (1 - p)) ~ -2.9)
in a loop over every linear module instead of only the output head, so the hidden ReLUs start with
pre-activations around -3: most units of the first ReLU and all of the second never fire, no gradient
reaches the backbone, and the model sits at the base-rate loss. fixed=True: the prior bias is set only on the output head.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "backbone.1"
SOURCE = ("TabM (arXiv 2410.24210, yandex-research/tabm, TabM-mini); prior-probability bias init "
          "from Focal Loss (Lin et al. 2017) / Karpathy 'init well' applied to every nn.Linear in a "
          "module loop, a known way to start with all-dead ReLU layers")

N_FEAT, K, POS_RATE = 16, 8, 0.05


class LinearEnsemble(nn.Module):
    """k independent linear heads, one per ensemble member."""
    def __init__(self, d_in, k):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(k, d_in).uniform_(-d_in ** -0.5, d_in ** -0.5))
        self.bias = nn.Parameter(torch.zeros(k))

    def forward(self, h):                                    # (B, k, d) -> (B, k)
        return (h * self.weight).sum(-1) + self.bias


class TabMMini(nn.Module):
    def __init__(self, d_in=N_FEAT, d_hidden=128, k=K):
        super().__init__()
        self.r = nn.Parameter(torch.empty(k, d_in).uniform_(0.5, 1.5))   # member adapters
        self.backbone = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU(), nn.Dropout(0.1),
                                      nn.Linear(d_hidden, d_hidden), nn.ReLU(), nn.Dropout(0.1))
        self.head = LinearEnsemble(d_hidden, k)

    def forward(self, x):                                    # (B, F) -> (B, k) logits
        return self.head(self.backbone(x.unsqueeze(1) * self.r))


def mean_member_bce(logits, y):
    return F.binary_cross_entropy_with_logits(logits, y.unsqueeze(1).expand_as(logits))


def _make_batches(g, steps, bs):
    w = torch.randn(N_FEAT, generator=g) * 0.8
    X = torch.randn(steps * bs, N_FEAT, generator=g)
    X[:, :4] = torch.sign(X[:, :4]) * X[:, :4].abs() ** 1.3       # some heavier-tailed columns
    X = (X - X.mean(0)) / X.std(0)                                # StandardScaler
    z = X @ w + 1.5 * X[:, 0] * X[:, 1] + 1.2 * torch.relu(X[:, 2] - 0.5) ** 2 - X[:, 3].abs()
    shift = torch.quantile(z, 1 - POS_RATE)
    y = torch.bernoulli(torch.sigmoid(2.0 * (z - shift)), generator=g)
    return [(X[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps = 200
    batches = _make_batches(g, steps, 256)
    model = TabMMini()
    prior = math.log(POS_RATE / (1 - POS_RATE))
    if fixed:
        nn.init.constant_(model.head.bias, prior)            # prior bias on the output only
    else:
        for m in model.modules():                            # bug: every linear layer gets it
            if isinstance(m, (nn.Linear, LinearEnsemble)):
                nn.init.constant_(m.bias, prior)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=3e-4)
    return dict(model=model, optimizer=opt, loss_fn=mean_member_bce, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
