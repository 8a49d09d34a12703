"""LoRA fine-tuning of a frozen, pretrained-style deep ReLU MLP encoder (requires_grad=False on the
backbone; only the low-rank adapters and the new head train). The hand-written LoRALinear initialises
BOTH low-rank factors with randn / sqrt(rank) (the B = 0 line was copied from the A line), so with
alpha = 32 every adapter adds a dense delta-W with entries of std ~11 on top of a well-scaled frozen
weight: each of the 10 layers multiplies the activation scale by ~90 from step 0, the regression
output reaches ~1e19 and the MSE loss overflows to inf at the first step.
fixed=True: the standard LoRA init (A kaiming-uniform, B = 0, the adapter starts as a no-op).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("LoRA (Hu et al. 2021) requires B = 0 at init; 'LoRA from scratch' re-implementations that "
          "init both factors randomly, and PEFT's init_lora_weights=False warning that the adapter is then "
          "not an identity transform (loss explodes at the first step of fine-tuning)")

D_IN = 32
WIDTH = 128
DEPTH = 10
RANK = 8
ALPHA = 32.0
BATCH = 64
STEPS = 200


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, fixed: bool):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(base.in_features, RANK))
        self.lora_B = nn.Parameter(torch.empty(RANK, base.out_features))
        if fixed:
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            nn.init.zeros_(self.lora_B)
        else:
            self.lora_A.data = torch.randn(base.in_features, RANK) / math.sqrt(RANK)
            self.lora_B.data = torch.randn(RANK, base.out_features) / math.sqrt(RANK)

    def forward(self, x):
        return self.base(x) + ALPHA * (x @ self.lora_A @ self.lora_B)


class Encoder(nn.Module):
    """Stands in for a pretrained tabular/embedding encoder: He-initialised ReLU MLP, no normalisation."""

    def __init__(self):
        super().__init__()
        dims = [D_IN] + [WIDTH] * DEPTH
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        for lin in self.layers:
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.zeros_(lin.bias)


class LoRARegressor(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        backbone = Encoder()
        self.encoder = nn.ModuleList(LoRALinear(lin, fixed) for lin in backbone.layers)
        self.head = nn.Linear(WIDTH, 1)

    def forward(self, x):
        for layer in self.encoder:
            x = F.relu(layer(x))
        return self.head(x).squeeze(-1)


def _make_batches(seed):
    # standardised regression target: a smooth nonlinear function of the features
    g = torch.Generator().manual_seed(seed)
    w1 = torch.randn(D_IN, 16, generator=g) / math.sqrt(D_IN)
    w2 = torch.randn(16, generator=g) / 4.0
    batches = []
    for _ in range(STEPS):
        x = torch.randn(BATCH, D_IN, generator=g)
        y = torch.tanh(x @ w1) @ w2 * 2.0 + 0.1 * torch.randn(BATCH, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = LoRARegressor(fixed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=5e-4, weight_decay=0.0)
    return dict(model=model, optimizer=optimizer, loss_fn=F.mse_loss,
                batches=_make_batches(seed), steps=STEPS, amp_dtype=None, scaler=None)
