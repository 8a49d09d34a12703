"""Small encoder for station weather series: an input projection, two pre-RMSNorm blocks with
grouped-query attention (4 query heads sharing 2 key/value heads) and rotary position embeddings
plus SwiGLU, a station embedding added to the stream, and a regression head on the last step that
forecasts the pressure 3 hours ahead. The features go in exactly as logged -- pressure in pascals
(~1e5), temperature in kelvin (~290), relative humidity in percent, wind in m/s -- and the target
is also in pascals. The in_proj output is dominated by the ~1e5 pressure column, the RMSNorms
inside the blocks squash everything to unit scale, and the head has to produce numbers around 1e5
with weights that Adam (lr 3e-3) moves by ~3e-3 per step: the MSE starts near 1e10 and stays there
for the whole run. No NaN, just an enormous, flat loss. Fixed: the same run with inputs and targets
standardised with the training-set mean/std."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "in_proj"
SOURCE = ("sensor / weather forecasting with un-normalised physical units (pressure in Pa); "
          "standard advice: standardise features and targets (e.g. PyTorch forum 'loss huge and not "
          "decreasing regression', RevIN/instance-norm motivation)")

F_IN, D, T, NH, NKV, S = 4, 32, 24, 4, 2, 6
HD = D // NH


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, base=10000.0):
    pos = torch.arange(x.shape[-2], dtype=torch.float32)
    inv = base ** (-torch.arange(0, x.shape[-1], 2, dtype=torch.float32) / x.shape[-1])
    ang = pos[:, None] * inv[None]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)


class GQA(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, NH * HD, bias=False)
        self.k_proj = nn.Linear(D, NKV * HD, bias=False)
        self.v_proj = nn.Linear(D, NKV * HD, bias=False)
        self.o_proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        B, L, _ = x.shape
        q = rope(self.q_proj(x).view(B, L, NH, HD).transpose(1, 2))
        k = rope(self.k_proj(x).view(B, L, NKV, HD).transpose(1, 2))
        v = self.v_proj(x).view(B, L, NKV, HD).transpose(1, 2)
        rep = NH // NKV
        y = F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(B, L, D))


class SwiGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(D, hidden, bias=False)
        self.w3 = nn.Linear(D, hidden, bias=False)
        self.w2 = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.attn = RMSNorm(D), GQA()
        self.norm2, self.mlp = RMSNorm(D), SwiGLU()

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class WeatherEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(F_IN, D)
        self.station = nn.Embedding(S, D)
        self.blocks = nn.ModuleList(Block() for _ in range(2))
        self.norm = RMSNorm(D)
        self.head = nn.Linear(D, 1)

    def forward(self, feats, station):
        x = self.in_proj(feats) + self.station(station)[:, None]
        for b in self.blocks:
            x = b(x)
        return {"pressure_3h": self.head(self.norm(x[:, -1])).squeeze(-1)}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = WeatherEncoder()
    steps, B = 150, 32
    base_p = 101325.0 + 800.0 * torch.randn(S, generator=g)     # station altitude effect

    def raw_batch():
        st = torch.randint(0, S, (B,), generator=g)
        t = torch.arange(T + 3, dtype=torch.float32)
        trend = 60.0 * torch.randn(B, 1, generator=g)                       # Pa per hour
        wave = 150.0 * torch.sin(2 * math.pi * (t[None] + 24 * torch.rand(B, 1, generator=g)) / 24)
        p = base_p[st][:, None] + trend * t[None] + wave + 20.0 * torch.randn(B, T + 3, generator=g)
        temp = 288.0 + 8.0 * torch.randn(B, 1, generator=g) - 0.004 * (p - 101325.0) + torch.randn(B, T + 3, generator=g)
        rh = (70.0 - 0.01 * (p - 101325.0) + 5 * torch.randn(B, T + 3, generator=g)).clamp(5, 100)
        wind = (4.0 + 0.004 * trend.abs() * 10 + torch.randn(B, T + 3, generator=g)).clamp(min=0)
        feats = torch.stack([p, temp, rh, wind], -1)[:, :T]
        return feats, st, p[:, T + 2]

    raw = [raw_batch() for _ in range(steps)]
    if fixed:
        allf = torch.cat([r[0].reshape(-1, F_IN) for r in raw])
        ally = torch.cat([r[2] for r in raw])
        fm, fs, ym, ys = allf.mean(0), allf.std(0), ally.mean(), ally.std()
        batches = [(((f - fm) / fs, st), {"pressure_3h": (y - ym) / ys}) for f, st, y in raw]
    else:
        batches = [((f, st), {"pressure_3h": y}) for f, st, y in raw]

    def loss_fn(out, tgt):
        return F.mse_loss(out["pressure_3h"], tgt["pressure_3h"])

    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
