"""Expert-choice mixture-of-experts layer (Zhou et al., NeurIPS 2022) in a small token model: a
router scores every (token, expert) pair, softmaxes over experts, and then each *expert* picks its
top-c tokens (capacity c = capacity_factor * tokens / experts); picked tokens go through that
expert's FFN, weighted by the router probability, and are added to the residual stream.  A per-token
regression head is trained with Huber loss; AdamW.

Why it looks alarming but is healthy: in every batch a sizeable fraction of tokens is picked by no
expert (their MoE output is exactly 0 and they only pass the residual), and the router receives
exactly-zero gradient on every unpicked (token, expert) score; with capacity factor < 1 the
zero-gradient fraction of router entries is large, and the gradient of the expert weights is built
from only the chosen rows.  This is how expert-choice routing works, not dead units: the top-c
selection changes from batch to batch, every expert processes c tokens every step, and the loss
falls steadily.

ORIGIN: None -- healthy run.

Fix: none needed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Zhou et al. 2022 'Mixture-of-Experts with Expert Choice Routing' (each expert selects its "
          "top-k tokens; some tokens are processed by no expert); Fedus et al. 2021 Switch "
          "Transformer (dropped tokens pass through the residual)")


class ExpertChoiceMoE(nn.Module):
    def __init__(self, d, n_exp, d_ff, capacity_factor):
        super().__init__()
        self.router = nn.Linear(d, n_exp, bias=False)
        self.w1 = nn.Parameter(torch.randn(n_exp, d, d_ff) / d ** 0.5)
        self.w2 = nn.Parameter(torch.randn(n_exp, d_ff, d) / d_ff ** 0.5)
        self.n_exp, self.cf = n_exp, capacity_factor

    def forward(self, x):                                   # x: (N, d) flattened tokens
        N = x.shape[0]
        probs = torch.softmax(self.router(x), dim=-1)       # (N, E)
        c = max(1, int(self.cf * N / self.n_exp))
        gate, idx = probs.t().topk(c, dim=1)                # each expert picks c tokens: (E, c)
        xe = x[idx]                                         # (E, c, d)
        ye = torch.bmm(F.gelu(torch.bmm(xe, self.w1)), self.w2) * gate[..., None]
        out = torch.zeros_like(x)
        out.index_add_(0, idx.reshape(-1), ye.reshape(-1, x.shape[1]))
        return out


class TokenRegressor(nn.Module):
    def __init__(self, d_in, d, n_exp, d_ff, cf):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.norm = nn.LayerNorm(d)
        self.moe = ExpertChoiceMoE(d, n_exp, d_ff, cf)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        B, T, _ = x.shape
        h = self.inp(x).reshape(B * T, -1)
        h = h + self.moe(self.norm(h))
        return self.head(h).reshape(B, T)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [64, 48, 96][seed % 3]
    n_exp = [4, 8, 6][seed % 3]
    cf = [0.75, 0.5, 1.0][seed % 3]
    bs = [16, 24, 12][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    d_in, T, n_regime, steps = 12, 16, 4, 200
    regime_w = torch.randn(n_regime, d_in, generator=g)
    regime_key = torch.randn(n_regime, d_in, generator=g) * 2
    batches = []
    for _ in range(steps):
        r = torch.randint(0, n_regime, (bs, T), generator=g)
        x = torch.randn(bs, T, d_in, generator=g) + regime_key[r]
        y = torch.sin((x * regime_w[r]).sum(-1) / 2) * 2 + 0.1 * torch.randn(bs, T, generator=g)
        batches.append((x, y))
    torch.manual_seed(seed)
    model = TokenRegressor(d_in, d, n_exp, 2 * d, cf)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(), batches=batches, steps=steps)
