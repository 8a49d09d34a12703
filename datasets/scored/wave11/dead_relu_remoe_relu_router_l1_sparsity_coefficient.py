"""ReMoE-style mixture of experts (Wang et al. 2024, "ReMoE: fully differentiable MoE with ReLU
routing") inside a small byte tagger: the router gates are relu(W_r x) instead of top-k softmax,
and sparsity is encouraged with an L1 penalty lambda * mean(gates) added to the loss. The paper
controls lambda adaptively (start at 1e-8, multiply by 1.2 up or down each step to hit a target
sparsity); here a constant lambda = 0.2 was used. The L1 term pushes every router pre-activation
down by the same amount at every step, much harder than the task gradient pushes any of them up, so
within a few dozen steps every gate is relu(<0) = 0 for every token. From then on no expert
receives any input gradient, the router receives exactly zero gradient (ReLU'(x<0) = 0, and the L1
term is zero too), the MoE output is zero and the tag -- a parity of bits from the last three
bytes, which the linear residual path cannot represent -- stays at chance: a flat plateau at log 2
with no NaN. Fixed: the same run with lambda = 1e-3."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "moe.router"
SOURCE = ("Wang et al. 2024 ReMoE (ReLU routing with adaptive L1 regularisation; the paper notes "
          "that too large a penalty kills routes); dead-expert / dead-router reports in MoE training")

V, D, E, H, T = 16, 32, 4, 48, 32


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class ShortConv(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.conv = nn.Conv1d(D, D, k, groups=D, padding=k - 1)
        self.proj = nn.Linear(D, D)

    def forward(self, x):
        return self.proj(self.conv(x.transpose(1, 2))[..., : x.shape[1]].transpose(1, 2))


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_gate = nn.Linear(D, H, bias=False)
        self.w_up = nn.Linear(D, H, bias=False)
        self.w_down = nn.Linear(H, D, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class ReluRoutedMoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D, E)
        self.experts = nn.ModuleList(Expert() for _ in range(E))

    def forward(self, x):
        gates = F.relu(self.router(x))                       # (B, T, E), sparse and differentiable
        out = sum(gates[..., e:e + 1] * ex(x) for e, ex in enumerate(self.experts))
        return out, gates


class ReMoETagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.norm1, self.mixer = RMSNorm(D), ShortConv()
        self.norm2, self.moe = RMSNorm(D), ReluRoutedMoE()
        self.norm_f = RMSNorm(D)
        self.head = nn.Linear(D, 2)

    def forward(self, ids):
        x = self.embed(ids)
        x = x + self.mixer(self.norm1(x))
        h, gates = self.moe(self.norm2(x))
        x = x + h
        return {"logits": self.head(self.norm_f(x)), "gates": gates}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ReMoETagger()
    lam = 1e-3 if fixed else 0.2
    steps, B = 200, 32

    def batch():
        ids = torch.randint(0, V, (B, T), generator=g)
        prev = torch.cat([torch.zeros(B, 1, dtype=torch.long), ids[:, :-1]], 1)
        prev2 = torch.cat([torch.zeros(B, 2, dtype=torch.long), ids[:, :-2]], 1)
        y = (ids & 1) ^ ((prev >> 1) & 1) ^ ((prev2 >> 2) & 1)
        return ids, y

    batches = [batch() for _ in range(steps)]

    def loss_fn(out, y):
        ce = F.cross_entropy(out["logits"].reshape(-1, 2), y.reshape(-1))
        return ce + lam * out["gates"].mean()

    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
