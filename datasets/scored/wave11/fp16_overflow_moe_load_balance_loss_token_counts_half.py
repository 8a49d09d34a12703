"""Byte-level next-token model with a top-1 mixture-of-experts SwiGLU layer and a Switch-style
load-balancing loss, trained under float16 autocast. The router writes the auxiliary loss as ``E *
sum_i(tokens_i * probsum_i) / N**2`` -- it multiplies the raw per-expert token COUNT by the raw
per-expert SUM of router probabilities and only divides by N^2 at the end. Mathematically that is
the usual E * sum f_i P_i (about 1), but the router runs in half precision under autocast, so the
intermediate product lives in fp16. With ~1.5k tokens per batch, an expert that receives a few
hundred tokens makes tokens_i * probsum_i pass 65504: the product is inf, the aux loss is inf and
the reported total loss is inf from the very first step and at every step after it (the backward of
the aux term stays finite, so the weights keep moving while every logged loss, loss-based early
stopping and scheduler sees inf). Fixed: the same model with the router/aux-loss arithmetic done in
float32 (selective precision, as Switch Transformer does); everything else stays under fp16
autocast."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "moe.router"
SOURCE = ("Switch Transformer 'selective precision' (router must run in float32; bf16/fp16 router "
          "diverged) and fp16 overflow reports for MoE load-balancing losses computed from raw "
          "token counts")

V, D, E, HID = 32, 32, 8, 48


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


class Router(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.proj = nn.Linear(D, E, bias=False)
        self.fp32 = fp32

    def forward(self, x):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                logits = self.proj(x.float())
        else:
            logits = self.proj(x)
        probs = torch.softmax(logits, -1)
        gate, idx = probs.max(-1)
        n = x.shape[0]
        counts = F.one_hot(idx, E).to(probs.dtype).sum(0)  # tokens per expert
        probsum = probs.sum(0)                               # router mass per expert
        aux = E * (counts * probsum).sum() / (n * n)
        return gate, idx, aux


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_gate = nn.Linear(D, HID, bias=False)
        self.w_up = nn.Linear(D, HID, bias=False)
        self.w_down = nn.Linear(HID, D, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class MoE(nn.Module):
    def __init__(self, fp32_router):
        super().__init__()
        self.router = Router(fp32_router)
        self.experts = nn.ModuleList(Expert() for _ in range(E))

    def forward(self, x):
        shp = x.shape
        x = x.reshape(-1, D)
        gate, idx, aux = self.router(x)
        out = torch.zeros_like(self.experts[0](x[:1])).expand(x.shape[0], D).clone()
        for e, expert in enumerate(self.experts):
            sel = (idx == e).nonzero().squeeze(-1)
            if sel.numel():
                out = out.index_add(0, sel, (expert(x[sel]) * gate[sel, None].to(x.dtype)).to(out.dtype))
        return out.reshape(shp), aux


class ByteMoELM(nn.Module):
    def __init__(self, fp32_router):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.mix = nn.Linear(2 * D, D)        # token-shift mixer: [x_t, x_{t-1}]
        self.norm = RMSNorm(D)
        self.moe = MoE(fp32_router)
        self.norm_f = RMSNorm(D)
        self.head = nn.Linear(D, V)

    def forward(self, ids):
        x = self.embed(ids)
        prev = F.pad(x, (0, 0, 1, 0))[:, :-1]
        x = x + self.mix(torch.cat([x, prev], -1))
        h, aux = self.moe(self.norm(x))
        x = x + h
        return self.head(self.norm_f(x)), aux


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ByteMoELM(fp32_router=fixed)
    steps, B, T = 60, 24, 64
    # order-2 "byte" source: next byte depends on the previous two
    table = torch.randint(0, V, (V, V, 3), generator=g)

    def sample():
        ids = torch.zeros(B, T + 1, dtype=torch.long)
        ids[:, :2] = torch.randint(0, V, (B, 2), generator=g)
        for t in range(2, T + 1):
            choice = torch.randint(0, 3, (B,), generator=g)
            ids[:, t] = table[ids[:, t - 2], ids[:, t - 1], choice]
        return ids[:, :-1], ids[:, 1:]

    pool = [sample() for _ in range(20)]
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(out, y):
        logits, aux = out
        return F.cross_entropy(logits.reshape(-1, V).float(), y.reshape(-1)) + 0.01 * aux

    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
