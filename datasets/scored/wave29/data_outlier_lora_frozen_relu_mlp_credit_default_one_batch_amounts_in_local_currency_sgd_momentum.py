"""LoRA adaptation of a frozen, pre-trained ReLU MLP credit-default scorer to a new
market (rank-r adapters on every hidden Linear, fresh trainable head, BCE-with-logits,
SGD with momentum).

Mechanism: the fine-tuning data is standardised with the source-market statistics, but one
batch (its position varies with the seed) comes from a partner feed whose monetary columns
are in the local currency (about 30x the home unit), so after standardisation with the
home-market statistics those columns sit ~30-150 sigma out.  At that step the
adapter products B·A see an input hundreds of times larger than usual; the gradient on the
adapters (and on the head) is correspondingly huge and, carried by momentum for the next
steps, it moves the adapted hidden pre-activations so far that the ReLUs after them are
off for every normal input.  The frozen base cannot compensate, the dead units pass no
gradient back to the adapters, and the loss returns to and stays at the label-prior level
for the rest of the run: a stall with no non-finite value.

ORIGIN: ``body.0`` -- the first LoRA-adapted layer, the first module the corrupt batch hits
and the one whose adapter takes the giant update.

Fix: the loader drops/clips rows whose standardised features are beyond a sane range
(|z| > 8 is clipped), so the local-currency batch is clipped to the range of the other
batches.  Same model, adapters, optimiser and steps.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "body.0"
SOURCE = ("LoRA (Hu et al. 2021) fine-tuning of a frozen tabular MLP; known pattern: a batch "
          "from a feed with amounts in another currency unit slipping past "
          "standardisation, one giant SGD+momentum step that kills the ReLUs downstream")


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


class Scorer(nn.Module):
    def __init__(self, n_feat, width, depth):
        super().__init__()
        layers, d = [], n_feat
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(4000 + seed)
    n_feat = 20
    width = [64, 96, 128][seed % 3]
    depth = [2, 3, 2][seed % 3]
    r = [4, 8, 4][seed % 3]
    lr = [0.03, 0.02, 0.04][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = 200
    bad_step = [23, 41, 67][seed % 3]
    money_cols = torch.tensor([0, 3, 7, 11])

    w_src = torch.randn(n_feat, generator=g)
    w_tgt = w_src + 0.8 * torch.randn(n_feat, generator=g)

    def sample(n, w):
        x = torch.randn(n, n_feat, generator=g)
        z = x @ w / math.sqrt(n_feat) * 2.0 + 0.8 * torch.tanh(x[:, 1] * x[:, 2])
        y = (torch.rand(n, generator=g) < torch.sigmoid(2.0 * z)).float()
        return x, y

    # ---- pre-train the base on the source market (deterministic) ----
    torch.manual_seed(seed)
    base = Scorer(n_feat, width, depth)
    popt = torch.optim.Adam(base.parameters(), lr=3e-3)
    for _ in range(150):
        x, y = sample(256, w_src)
        popt.zero_grad()
        F.binary_cross_entropy_with_logits(base(x), y).backward()
        popt.step()

    # ---- wrap hidden layers with LoRA, new head for the target market ----
    for i, m in enumerate(base.body):
        if isinstance(m, nn.Linear):
            base.body[i] = LoRALinear(m, r, alpha=2 * r)
    base.head = nn.Linear(width, 1)
    model = base

    batches = []
    for step in range(steps):
        x, y = sample(bs, w_tgt)
        if step == bad_step:
            # partner feed: monetary columns in local currency (~30x) -> tens of sigma out
            x[:, money_cols] = x[:, money_cols] * 30.0 + 60.0
        if fixed:
            x = x.clamp(-8.0, 8.0)
        batches.append((x, y))

    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(trainable, lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
