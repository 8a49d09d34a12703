"""Set Transformer (Lee et al. 2019: SAB -> SAB -> PMA -> Linear) classifying
user sessions, each a variable-size set of event feature vectors padded to the
batch maximum with a mask.  Before the encoder, a hand-written per-set
feature normalisation layer standardises every feature over the valid elements
of its set (an instance-norm over the set dimension), so that devices with
different sensor offsets / gains are comparable.

Mechanism: the normaliser uses the unbiased variance sum((x - mean)^2) / (n - 1)
and no epsilon.  Most sessions have 3-20 events and the run is calm, but now and
then a batch contains a single-event session: n - 1 = 0 and (x - mean) = 0, so
the variance is 0/0 = NaN, the standardised features are NaN, attention spreads
the NaN to the whole batch, and the loss is NaN.

ORIGIN: ``set_norm`` -- the per-set normalisation module is the op that produces
the first non-finite value.

Fix: biased variance (divide by n) plus eps = 1e-5 inside the sqrt (what
nn.InstanceNorm1d / nn.LayerNorm do); a singleton set then normalises to zeros.
Model, data, optimiser unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "set_norm"
SOURCE = ("Lee et al. 2019 'Set Transformer' (SAB/PMA, official PyTorch code); hand-written "
          "masked per-set standardisation with torch-style unbiased variance and no eps -> "
          "NaN on singleton sets (cf. torch.std of one element = nan)")


class MaskedSetNorm(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.safe = safe

    def forward(self, x, mask):                 # x (B, N, D), mask (B, N) bool, True = valid
        m = mask.unsqueeze(-1).float()
        n = m.sum(1, keepdim=True)
        mean = (x * m).sum(1, keepdim=True) / n
        sq = ((x - mean) ** 2 * m).sum(1, keepdim=True)
        if self.safe:
            std = torch.sqrt(sq / n + 1e-5)
        else:
            std = torch.sqrt(sq / (n - 1))      # unbiased, no eps
        return (x - mean) / std * m


class MAB(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln0 = nn.LayerNorm(dim)
        self.ln1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, q, kv, key_pad):
        h = self.ln0(q + self.attn(q, kv, kv, key_padding_mask=key_pad, need_weights=False)[0])
        return self.ln1(h + self.ff(h))


class SetTransformer(nn.Module):
    def __init__(self, d_in, dim, heads, n_cls, safe_norm):
        super().__init__()
        self.set_norm = MaskedSetNorm(safe_norm)
        self.embed = nn.Linear(d_in, dim)
        self.sab1 = MAB(dim, heads)
        self.sab2 = MAB(dim, heads)
        self.seed = nn.Parameter(torch.randn(1, 1, dim) * dim ** -0.5)
        self.pma = MAB(dim, heads)
        self.head = nn.Linear(dim, n_cls)

    def forward(self, x, mask):
        pad = ~mask
        h = self.embed(self.set_norm(x, mask))
        h = self.sab1(h, h, pad)
        h = self.sab2(h, h, pad)
        s = self.pma(self.seed.expand(x.shape[0], -1, -1), h, pad)
        return self.head(s.squeeze(1))


def _sessions(g, steps, bsz, d, n_max, singleton_steps):
    # class = correlation structure between two features (invariant to per-set standardisation)
    rhos = torch.tensor([0.8, 0.0, -0.8])
    batches = []
    for step in range(steps):
        y = torch.randint(0, 3, (bsz,), generator=g)
        sizes = torch.randint(3, n_max + 1, (bsz,), generator=g)
        if step in singleton_steps:
            sizes[int(torch.randint(0, bsz, (1,), generator=g))] = 1
        e = torch.randn(bsz, n_max, d, generator=g)
        r = rhos[y][:, None]
        e[..., 1] = r * e[..., 0] + torch.sqrt(1 - r ** 2) * e[..., 1]
        offset = 5 * torch.randn(bsz, 1, d, generator=g)
        gain = torch.exp(torch.randn(bsz, 1, d, generator=g))
        x = e * gain + offset                       # device-specific offset / gain
        mask = torch.arange(n_max)[None, :] < sizes[:, None]
        x = x * mask.unsqueeze(-1)
        batches.append(((x, mask), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(d=4, dim=32, heads=4, bsz=32, n_max=16, lr=1e-3, steps=150, single=(57, 98)),
        dict(d=6, dim=48, heads=4, bsz=24, n_max=20, lr=7e-4, steps=140, single=(83,)),
        dict(d=3, dim=32, heads=2, bsz=48, n_max=12, lr=1e-3, steps=160, single=(34, 120, 121)),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2718 + seed)
    model = SetTransformer(cfg["d"], cfg["dim"], cfg["heads"], 3, safe_norm=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    batches = _sessions(g, cfg["steps"], cfg["bsz"], cfg["d"], cfg["n_max"], set(cfg["single"]))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
