"""Fine-tuning a (small, mT5-style) pretrained multilingual encoder block for aligned
transliteration tagging of a low-resource language: byte/character embeddings -> RMSNorm -> local mixing conv -> RMSNorm ->
gated-GELU feed-forward block (wi_0, wi_1, wo) with a residual connection -> RMSNorm ->
per-position classifier over target graphemes.  The forward pass runs under float16 autocast
without a GradScaler.  Adam.

Mechanism: checkpoints of the T5 v1.1 / mT5 family (pre-trained in bfloat16) have feed-forward
output projections ``wo`` whose outputs reach 1e4-1e6 on ordinary inputs; the residual stream
relies on the following RMSNorm to bring them back.  The "pretrained" weights here reproduce
those statistics (a large pre-FFN RMSNorm gain and a large-norm ``wo``).  Under float16 autocast, ``wo`` is computed in half
precision and a good fraction of its outputs exceed 65504: they become inf, the RMSNorm's mean
of squares is inf, inf / inf gives NaN, and the loss is NaN at the first step.  In float32 the
same values are representable and fine-tuning proceeds normally.

ORIGIN: ``block.wo`` -- the feed-forward output projection whose half-precision outputs pass
65504 (everything upstream of it is finite in fp16).

Fix (fixed=True): ``wo`` is kept in float32 (autocast disabled for that Linear, input cast to
float), exactly what Hugging Face does with ``_keep_in_fp32_modules = ["wo"]`` for T5/mT5; the
rest of the model still runs in float16 and nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "block.wo"
SOURCE = ("Hugging Face transformers: T5/mT5 produce inf/NaN in fp16 (issues #10830, #14189; "
          "T5PreTrainedModel._keep_in_fp32_modules = ['wo'] and the fp16 clamp in T5LayerFF); "
          "mT5 (Xue et al. 2021) fine-tuning for low-resource transliteration.")

N_BYTES = 64


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + 1e-6))


class FP32Linear(nn.Linear):
    def forward(self, x):
        with torch.autocast(device_type=x.device.type, enabled=False):
            return F.linear(x.float(), self.weight, self.bias)


class GatedGeluFFN(nn.Module):
    def __init__(self, d, ff, wo_fp32):
        super().__init__()
        self.wi_0 = nn.Linear(d, ff, bias=False)
        self.wi_1 = nn.Linear(d, ff, bias=False)
        self.wo = (FP32Linear if wo_fp32 else nn.Linear)(ff, d, bias=False)

    def forward(self, x):
        return self.wo(F.gelu(self.wi_0(x)) * self.wi_1(x))


class TranslitEncoder(nn.Module):
    def __init__(self, d, ff, n_tgt, wo_fp32):
        super().__init__()
        self.emb = nn.Embedding(N_BYTES, d)
        self.norm_in = RMSNorm(d)
        self.mix = nn.Conv1d(d, d, 3, padding=1)
        self.norm_ff = RMSNorm(d)
        self.block = GatedGeluFFN(d, ff, wo_fp32)
        self.norm_out = RMSNorm(d)
        self.head = nn.Linear(d, n_tgt)

    def forward(self, x):
        h = self.emb(x)
        h = h + self.mix(self.norm_in(h).transpose(1, 2)).transpose(1, 2)
        h = h + self.block(self.norm_ff(h))
        return self.head(self.norm_out(h)).transpose(1, 2)      # (B, n_tgt, L)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [64, 48, 96][seed % 3]
    ff = [128, 192, 96][seed % 3]
    ff_gain = [64.0, 80.0, 56.0][seed % 3]      # "pretrained" pre-FFN RMSNorm gain
    wo_scale = [60.0, 48.0, 80.0][seed % 3]      # "pretrained" wo weight scale vs. default init
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [24, 16, 32][seed % 3]
    L = 16
    n_tgt = 40
    steps = 80

    torch.manual_seed(seed)
    model = TranslitEncoder(d, ff, n_tgt, wo_fp32=fixed)
    with torch.no_grad():
        model.norm_ff.weight.fill_(ff_gain)
        model.block.wo.weight.mul_(wo_scale)

    base = torch.randint(0, n_tgt, (N_BYTES,), generator=g)
    alt = torch.randint(0, n_tgt, (N_BYTES,), generator=g)
    vowel_sign = torch.rand(N_BYTES, generator=g) < 0.3
    batches = []
    for _ in range(steps):
        x = torch.randint(0, N_BYTES, (bs, L), generator=g)
        nxt = torch.cat([x[:, 1:], torch.zeros(bs, 1, dtype=torch.long)], 1)
        y = torch.where(vowel_sign[nxt], alt[x], base[x])
        batches.append((x, y))

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=None)
