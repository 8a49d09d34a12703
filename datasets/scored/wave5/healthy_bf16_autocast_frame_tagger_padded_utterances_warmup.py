"""A small Transformer encoder tags every frame of variable-length utterances (silence /
unvoiced / voiced / music-like, from 24-dim filterbank-like features) and runs its forward
and loss under bfloat16 autocast. Utterances are padded to the batch maximum with a
key-padding mask, padded frames are excluded from the loss, and the learning rate is warmed
up linearly from ~0 over the first 20 steps by an optimiser step hook. Several things look
suspicious: the loss moves slowly for the first steps (warmup), the logits come out of the
model in bf16 (only ~3 significant digits), long stretches of every batch (padding) get
exactly zero gradient, and the per-batch loss moves with the mix of utterance lengths.
None of it is a problem: bf16 has the fp32 exponent range (no overflow, no scaler needed),
the mask keeps the padding out of attention and loss, and the run trains normally. Nothing
to fix.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP docs (bfloat16 autocast needs no GradScaler); Transformer frame taggers "
          "with src_key_padding_mask and linear warmup (ESPnet / SpeechBrain style recipes)")

NF, TMAX, D, NCLS, WARM, PEAK = 24, 40, 32, 4, 20, 2e-3


class FrameTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(NF, D)
        pe = torch.zeros(TMAX, D)
        pos = torch.arange(TMAX).float()[:, None]
        div = torch.exp(torch.arange(0, D, 2).float() * (-math.log(10000.0) / D))
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.register_buffer("pe", pe)
        layer = nn.TransformerEncoderLayer(D, 4, 64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.out = nn.Linear(D, NCLS)

    def forward(self, feats, pad):                      # pad: (B, T) True = padding
        h = self.inp(feats) + self.pe[: feats.shape[1]]
        return self.out(self.encoder(h, src_key_padding_mask=pad))


def _batch(g, bs):
    lengths = torch.randint(12, TMAX + 1, (bs,), generator=g)
    T = int(lengths.max())
    pad = torch.arange(T)[None] >= lengths[:, None]
    # piecewise-constant label sequences (segments of 4-12 frames)
    lab = torch.zeros(bs, T, dtype=torch.long)
    for i in range(bs):
        t = 0
        while t < T:
            seg = int(torch.randint(4, 13, (1,), generator=g))
            lab[i, t:t + seg] = int(torch.randint(0, NCLS, (1,), generator=g))
            t += seg
    f = torch.arange(NF).float()
    proto = torch.stack([torch.full((NF,), -2.0),                          # silence
                         -1.0 + f / NF * 2.0,                              # unvoiced: rising tilt
                         1.0 - f / NF * 2.0 + 0.8 * torch.cos(f * 0.9),   # voiced: harmonics
                         0.5 * torch.sin(f * 0.5)])                        # music-like
    feats = proto[lab] + 0.7 * torch.randn(bs, T, NF, generator=g)
    feats = feats.masked_fill(pad[..., None], 0.0)
    lab = lab.masked_fill(pad, -100)
    return (feats, pad), lab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = FrameTagger()
    opt = torch.optim.AdamW(model.parameters(), lr=PEAK / WARM, weight_decay=0.01)
    counter = {"k": 0}

    def warmup_hook(optimizer, args, kwargs):           # linear warmup, then constant
        counter["k"] += 1
        for grp in optimizer.param_groups:
            grp["lr"] = PEAK * min(1.0, (counter["k"] + 1) / WARM)

    opt.register_step_post_hook(warmup_hook)
    steps, bs = 80, 12
    batches = [_batch(g, bs) for _ in range(steps)]

    def loss_fn(logits, lab):
        return F.cross_entropy(logits.reshape(-1, NCLS), lab.reshape(-1), ignore_index=-100)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16, scaler=None)
