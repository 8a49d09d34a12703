"""WaveNet (causal dilated conv stack with gated tanh*sigmoid units, residual + skip connections,
256-way mu-law softmax) trained under torch.autocast(float16) without a GradScaler.

Mechanism: the loss is written by hand as "sum of token NLLs, then divide by the token count":
-(log_softmax(logits).gather(...)).sum() / n. Under autocast the final 1x1 conv emits float16
logits, log_softmax and the gather stay in float16, and the sum over B*T tokens (~5.5 nats each,
>12k tokens per batch) passes 65504 and becomes inf before the division. The loss is inf from the
first step. ORIGIN None: the overflowing op is the reduction in the loss, not a module.
Fix: compute the log-softmax/NLL in float32 (logits.float()), i.e. keep the reduction out of fp16.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = "WaveNet/mu-law vocoder training with AMP fp16 and a hand-written summed NLL; loss inf under half precision (overflow past 65504)"


class ResBlock(nn.Module):
    def __init__(self, c, dil):
        super().__init__()
        self.dil = dil
        self.conv = nn.Conv1d(c, 2 * c, 2, dilation=dil)
        self.res = nn.Conv1d(c, c, 1)
        self.skip = nn.Conv1d(c, c, 1)

    def forward(self, x):
        h = self.conv(F.pad(x, (self.dil, 0)))
        a, b = h.chunk(2, 1)
        h = torch.tanh(a) * torch.sigmoid(b)
        return x + self.res(h), self.skip(h)


class WaveNet(nn.Module):
    def __init__(self, c, n_layers, q=256):
        super().__init__()
        self.embed = nn.Embedding(q, c)
        self.blocks = nn.ModuleList([ResBlock(c, 2 ** (i % 6)) for i in range(n_layers)])
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(c, c, 1), nn.ReLU(), nn.Conv1d(c, q, 1))

    def forward(self, x):
        h = self.embed(x).transpose(1, 2)
        skip = 0
        for b in self.blocks:
            h, s = b(h)
            skip = skip + s
        return self.out(skip)


def mulaw(x, q=256):
    y = torch.sign(x) * torch.log1p(255 * x.abs()) / torch.log1p(torch.tensor(255.0))
    return ((y + 1) / 2 * (q - 1) + 0.5).long().clamp(0, q - 1)


def build(seed, fixed=False):
    cfg = [dict(c=8, L=4, bs=6, T=2048, lr=3e-3), dict(c=8, L=5, bs=12, T=1024, lr=4e-3), dict(c=12, L=3, bs=4, T=3072, lr=3e-3)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = WaveNet(cfg["c"], cfg["L"])
    steps = 40
    batches = []
    t = torch.arange(cfg["T"] + 1).float()
    for _ in range(steps):
        f = 0.01 + 0.05 * torch.rand(cfg["bs"], 1, generator=g)
        ph = 6.28 * torch.rand(cfg["bs"], 1, generator=g)
        wav = 0.6 * torch.sin(f * t + ph) + 0.02 * torch.randn(cfg["bs"], cfg["T"] + 1, generator=g)
        tok = mulaw(wav)
        batches.append((tok[:, :-1], tok[:, 1:]))

    def loss_fn(logits, y):
        if fixed:
            logits = logits.float()
        logp = F.log_softmax(logits, 1)
        nll = -logp.gather(1, y.unsqueeze(1)).sum()
        return nll / y.numel()

    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=torch.float16)
