"""Switch-Transformer style top-1 mixture-of-experts feed-forward layer on a token-level regression
task (tokens of a sequence, each routed to exactly one expert, with a capacity factor of 1.0).
Several things look alarming but are normal: tokens beyond an expert's capacity are dropped (their
MoE output is exactly zero and only the residual path carries them), so some experts get exactly
zero gradient on some steps while others are overloaded; the router's softmax probabilities are
multiplied into the expert outputs, so router gradients are sparse and noisy; the auxiliary
load-balancing loss (Fedus et al.) is added on top of the task MSE, and the total loss is noisy
from batch to batch. The model still trains normally with AdamW."""
import torch, torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Switch Transformer (Fedus et al. 2021) top-1 routing with capacity factor and load-balancing loss; dropped tokens are expected behaviour"

class SwitchFFN(nn.Module):
    def __init__(self, d, hid, n_exp, capacity_factor):
        super().__init__()
        self.router = nn.Linear(d, n_exp)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, hid), nn.GELU(), nn.Linear(hid, d)) for _ in range(n_exp)])
        self.n_exp, self.cf = n_exp, capacity_factor
    def forward(self, h):
        probs = torch.softmax(self.router(h), -1)
        gate, idx = probs.max(-1)
        cap = int(self.cf * h.shape[0] / self.n_exp)
        out = torch.zeros_like(h)
        for e, expert in enumerate(self.experts):
            sel = (idx == e).nonzero(as_tuple=True)[0][:cap]
            if sel.numel() > 0:
                out = out.index_add(0, sel, gate[sel, None] * expert(h[sel]))
        frac = torch.bincount(idx, minlength=self.n_exp).float() / h.shape[0]
        aux = self.n_exp * (frac * probs.mean(0)).sum()
        return out, aux

class MoERegressor(nn.Module):
    def __init__(self, din, d, hid, n_exp, cf):
        super().__init__()
        self.inp = nn.Linear(din, d)
        self.norm = nn.LayerNorm(d)
        self.moe = SwitchFFN(d, hid, n_exp, cf)
        self.out = nn.Linear(d, 1)
    def forward(self, x):
        h = self.inp(x)
        m, aux = self.moe(self.norm(h))
        return {"y": self.out(h + m).squeeze(-1), "aux": aux}

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(151 + seed)
    d, hid, n_exp, bs, lr, steps = [(32, 64, 4, 256, 3e-3, 150), (24, 48, 8, 128, 5e-3, 120), (40, 64, 6, 384, 2e-3, 180)][seed]
    din = 10
    model = MoERegressor(din, d, hid, n_exp, 1.0)
    W = torch.randn(din, 3, generator=g) / din ** 0.5 * 1.5
    def make():
        x = torch.randn(bs, din, generator=g)
        z = x @ W
        y = torch.where(z[:, 0] > 0, torch.sin(z[:, 1]), 0.5 * z[:, 2] ** 2 - 1) + 0.1 * torch.randn(bs, generator=g)
        return x, y
    data = [make() for _ in range(20)]
    batches = [data[i % 20] for i in range(steps)]
    def loss_fn(out, y):
        return ((out["y"] - y) ** 2).mean() + 0.01 * out["aux"]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
