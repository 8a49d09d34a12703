"""Regressor with a top-2 mixture-of-experts SwiGLU layer (softmax router + Switch-style
load-balancing loss) behind RMSNorm, trained with the Lion optimizer at lr=0.1, the learning
rate of the SGD+momentum recipe it replaced. Lion's sign updates move EVERY weight by lr each step
(update/weight ratio ~1 here), so weights oscillate, routing flips between experts and the
loss stalls above its starting level while the fixed run keeps improving.
fixed=True uses lr=1e-3 (the Lion paper's advice: 3-10x smaller lr than AdamW, far below SGD).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Chen et al. 2023 'Symbolic Discovery of Optimization Algorithms' (Lion): lr must be 3-10x "
          "smaller than AdamW; users swapping SGD/AdamW for Lion without retuning the lr")

D_IN, DIM, HID, N_EXP, TOP_K, N_OUT = 16, 128, 256, 8, 2, 4


class Lion(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if "exp_avg" not in st:
                    st["exp_avg"] = torch.zeros_like(p)
                m = st["exp_avg"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                update = (m * b1 + p.grad * (1 - b1)).sign_()
                p.add_(update, alpha=-group["lr"])
                m.mul_(b2).add_(p.grad, alpha=1 - b2)
        return None


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, HID, bias=False)
        self.w3 = nn.Linear(DIM, HID, bias=False)
        self.w2 = nn.Linear(HID, DIM, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TopKMoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(DIM, N_EXP, bias=False)
        self.experts = nn.ModuleList([Expert() for _ in range(N_EXP)])

    def forward(self, x):
        logits = self.router(x)
        probs = logits.softmax(-1)
        w, idx = probs.topk(TOP_K, dim=-1)
        w = w / w.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            sel = idx == e
            rows = sel.any(-1).nonzero(as_tuple=True)[0]
            if rows.numel() == 0:
                continue
            we = (w * sel).sum(-1)[rows, None]
            out[rows] += we * expert(x[rows])
        # Switch-Transformer load-balancing loss: N * sum_i f_i * P_i
        frac = F.one_hot(idx, N_EXP).float().sum(1).mean(0) / TOP_K
        aux = N_EXP * (frac * probs.mean(0)).sum()
        return out, aux


class MoEClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(D_IN, DIM)
        self.norm1 = RMSNorm(DIM)
        self.moe = TopKMoE()
        self.norm2 = RMSNorm(DIM)
        self.head = nn.Linear(DIM, N_OUT)

    def forward(self, x):
        h = self.inp(x)
        m, aux = self.moe(self.norm1(h))
        h = h + m
        return self.head(self.norm2(h)), aux


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MoEClassifier()
    # smooth nonlinear regression teacher (standardised inputs and targets)
    A = torch.randn(D_IN, 32, generator=g) / math.sqrt(D_IN)
    Bm = torch.randn(32, N_OUT, generator=g) / math.sqrt(32 * 0.5)
    steps, bs = 200, 64
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, D_IN, generator=g)
        y = torch.sin(2.0 * x @ A) @ Bm
        batches.append((x, y))

    def loss_fn(out, y):
        pred, aux = out
        return F.mse_loss(pred, y) + 0.01 * aux

    lr = 1e-3 if fixed else 1e-1
    opt = Lion(model.parameters(), lr=lr, weight_decay=0.1)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
