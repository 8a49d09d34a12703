"""InfoNCE contrastive embedding model trained under float16 autocast on CPU.

The loss is written by hand: sim = z1 @ z2.T / tau with tau = 0.07 and then
exp(sim).  At start-up the two views are weakly aligned and exp(cos/tau) fits in
float16, but as the encoder learns, positive-pair cosines pass ~0.78 and
exp(cos/0.07) > 65504 overflows to inf in float16; inf/inf (or log 0) makes the loss non-finite.
fixed=True: the same hand-written loss, but the similarity/exp part runs in float32 (autocast off).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ("SimCLR/CLIP-style InfoNCE written by hand with exp(sim/temperature) under AMP; "
          "common 'NaN loss with fp16 and small temperature' reports (e.g. SimCLR/MoCo issues) "
          "where exp of logits > ~11 overflows float16")

TAU = 0.07


class Encoder(nn.Module):
    def __init__(self, d_in=64, d_hid=256, d_out=128):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, d_hid), nn.GELU(),
                                      nn.Linear(d_hid, d_hid), nn.LayerNorm(d_hid))
        self.proj = nn.Linear(d_hid, d_out)

    def forward(self, v1, v2):
        z1 = F.normalize(self.proj(self.backbone(v1)), dim=-1)
        z2 = F.normalize(self.proj(self.backbone(v2)), dim=-1)
        return torch.stack([z1, z2])


def make_loss(fixed):
    def infonce(out, target):
        z1, z2 = out[0], out[1]
        if fixed:
            with torch.autocast("cpu", enabled=False):     # similarity / exp in float32
                sim = (z1.float() @ z2.float().t()) / TAU
                e = torch.exp(sim)
        else:
            sim = (z1 @ z2.t()) / TAU          # float16 under autocast
            e = torch.exp(sim)
        pos = e.gather(1, target[:, None]).squeeze(1)
        return -torch.log(pos / e.sum(dim=1)).mean()
    return infonce


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in, n_proto, bs, steps = 64, 256, 64, 150
    protos = torch.randn(n_proto, d_in, generator=g)
    batches = []
    for _ in range(steps):
        idx = torch.randperm(n_proto, generator=g)[:bs]
        base = protos[idx]
        v1 = base + 1.5 * torch.randn(bs, d_in, generator=g)
        v2 = base + 1.5 * torch.randn(bs, d_in, generator=g)
        batches.append(((v1, v2), torch.arange(bs)))
    model = Encoder(d_in)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(fixed), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
