"""Griffin/Hawk-style recurrent block (RG-LRU) used as the token mixer of a small byte-sequence
classifier whose label is decided by a "header" byte at the start of a 40-byte record. The RG-LRU
computes a_t = sigmoid(Lambda)^(c*r_t) with c = 8 and h_t = a_t*h_{t-1} + sqrt(1-a_t^2)*(i_t*x_t).
The paper initialises Lambda so that a^c is uniform in [0.9, 0.999], i.e. Lambda =
logit((U[0.9,0.999])^(1/c)) ~ 4..9. Here the init writes ``uniform_(0.9, 0.999)`` straight into
Lambda, forgetting the logit/root transform, so sigmoid(Lambda) ~ 0.72 and a_t ~ 0.27: every
channel forgets in ~1 token. The header's contribution to the final state is multiplied by ~0.27^39
and the gradient reaching Lambda and the input path through that product is ~1e-20, so the
recurrence can never learn to keep the header: the loss sits at log(4) with no NaN, no warning,
healthy-looking gradient norms on the head. Fixed: the published Lambda init."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "block.rglru"
SOURCE = ("De et al. 2024, Griffin/Hawk RG-LRU: 'Lambda initialised such that a^c is uniform in "
          "[0.9, 0.999]'; re-implementations that write the target range into the raw parameter")

V, D, C, T = 24, 32, 4, 40


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class RGLRU(nn.Module):
    def __init__(self, d, paper_init, c=8.0):
        super().__init__()
        self.c = c
        self.gate_a = nn.Linear(d, d)
        self.gate_x = nn.Linear(d, d)
        self.lam = nn.Parameter(torch.empty(d))
        with torch.no_grad():
            if paper_init:
                ac = torch.empty(d).uniform_(0.9, 0.999)
                a = ac ** (1.0 / c)
                self.lam.copy_(torch.log(a) - torch.log1p(-a))   # logit(a)
            else:
                self.lam.uniform_(0.9, 0.999)

    def forward(self, x):
        r = torch.sigmoid(self.gate_a(x))
        i = torch.sigmoid(self.gate_x(x))
        log_a = self.c * r * F.logsigmoid(self.lam)          # log a_t
        a = torch.exp(log_a)
        mult = torch.sqrt(1 - torch.exp(2 * log_a) + 1e-12)
        u = mult * i * x
        h = torch.zeros_like(x[:, 0])
        hs = []
        for t in range(x.shape[1]):
            h = a[:, t] * h + u[:, t]
            hs.append(h)
        return torch.stack(hs, 1)


class RecurrentBlock(nn.Module):
    def __init__(self, paper_init):
        super().__init__()
        self.norm = RMSNorm(D)
        self.in_proj = nn.Linear(D, D)
        self.gate_proj = nn.Linear(D, D)
        self.rglru = RGLRU(D, paper_init)
        self.out_proj = nn.Linear(D, D)

    def forward(self, x):
        h = self.norm(x)
        return x + self.out_proj(self.rglru(self.in_proj(h)) * F.gelu(self.gate_proj(h)))


class HawkClassifier(nn.Module):
    def __init__(self, paper_init):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.block = RecurrentBlock(paper_init)
        self.norm_f = RMSNorm(D)
        self.head = nn.Linear(D, C)

    def forward(self, ids):
        x = self.block(self.embed(ids))
        return self.head(self.norm_f(x[:, -1]))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = HawkClassifier(paper_init=fixed)
    steps, B = 150, 32

    def batch():
        ids = torch.randint(C, V, (B, T), generator=g)      # body bytes
        y = torch.randint(0, C, (B,), generator=g)
        ids[:, 0] = y                                         # header byte carries the class
        return ids, y

    batches = [batch() for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
