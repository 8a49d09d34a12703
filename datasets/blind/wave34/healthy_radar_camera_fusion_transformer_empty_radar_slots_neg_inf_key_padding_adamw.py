"""Radar-camera object-level fusion with a small transformer encoder: each sample is one camera
detection (box geometry + appearance embedding token) plus the radar points gated into its
frustum (range, range-rate, RCS, azimuth offset), padded to a fixed number of radar slots.  A
hand-written attention block lets the camera token attend over [camera, radar...] tokens; the
fused camera token is classified into moving vehicle / stationary vehicle / pedestrian /
cyclist / clutter-ghost.  Cross-entropy with label smoothing, AdamW.

Why it looks suspicious but is healthy: the attention logits of padded radar slots are set to
-inf before the softmax (many samples have zero or one radar point, so most logits are -inf);
the camera token itself is never masked, so no softmax row is all -inf and no NaN can appear.
Label smoothing keeps the loss well above 0 (it plateaus at the smoothing entropy), and samples
with no radar return make per-batch losses jump when a batch has many of them.  It learns.

ORIGIN: None (healthy).

Fix: nothing to fix.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Known pattern: key-padding masks with -inf for variable numbers of radar points per "
          "object (radar-camera fusion transformers, e.g. TransFusion / CRAFT-style object-level "
          "fusion); masked -inf logits are harmless as long as every row keeps one valid key")


class FusionAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.o = nn.Linear(d, d)

    def forward(self, q_tok, tokens, valid):
        B, N, D = tokens.shape
        q = self.q(q_tok).view(B, 1, self.h, self.dk).transpose(1, 2)           # B h 1 dk
        k, v = self.kv(tokens).view(B, N, 2, self.h, self.dk).permute(2, 0, 3, 1, 4)
        logits = q @ k.transpose(-1, -2) / math.sqrt(self.dk)                    # B h 1 N
        logits = logits.masked_fill(~valid[:, None, None, :], float("-inf"))
        att = logits.softmax(-1)
        return self.o((att @ v).transpose(1, 2).reshape(B, D))


class RadarCameraFusion(nn.Module):
    def __init__(self, d, heads, n_cls):
        super().__init__()
        self.cam_embed = nn.Sequential(nn.Linear(8, d), nn.GELU(), nn.Linear(d, d))
        self.rad_embed = nn.Sequential(nn.Linear(4, d), nn.GELU(), nn.Linear(d, d))
        self.attn = FusionAttention(d, heads)
        self.norm = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.cls = nn.Linear(d, n_cls)

    def forward(self, cam, rad, rad_valid):
        c = self.cam_embed(cam)
        tokens = torch.cat([c[:, None], self.rad_embed(rad)], 1)
        valid = torch.cat([torch.ones_like(rad_valid[:, :1]), rad_valid], 1)
        z = self.norm(c + self.attn(c, tokens, valid))
        z = z + self.ffn(z)
        return self.cls(z)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [32, 48, 64][seed % 3]
    heads = [4, 4, 8][seed % 3]
    lr = [2e-3, 1.5e-3, 1e-3][seed % 3]
    bs = [64, 48, 32][seed % 3]
    slots = [8, 6, 10][seed % 3]
    steps = 150
    n_cls = 5
    model = RadarCameraFusion(d, heads, n_cls)

    cam_proto = torch.randn(n_cls, 8, generator=g) * 0.6
    cam_proto[0] = cam_proto[1]             # moving vs stationary vehicle: same appearance
    rr = torch.tensor([1.5, 0.0, 0.4, 0.8, 0.0])       # range-rate signature
    rcs = torch.tensor([1.0, 1.0, -0.8, -0.4, 0.3])
    n_pts_mean = torch.tensor([4.0, 4.0, 1.0, 1.5, 0.5])
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        cam = cam_proto[y] + 0.5 * torch.randn(bs, 8, generator=g)
        n_pts = torch.poisson(n_pts_mean[y].expand(bs), generator=g).clamp(max=slots).long()
        rad_valid = torch.arange(slots)[None] < n_pts[:, None]
        rad = torch.stack([torch.randn(bs, slots, generator=g) * 0.3 + 1.0,
                           rr[y, None] + 0.2 * torch.randn(bs, slots, generator=g),
                           rcs[y, None] + 0.4 * torch.randn(bs, slots, generator=g),
                           0.2 * torch.randn(bs, slots, generator=g)], -1)
        rad = rad * rad_valid[..., None]
        batches.append(((cam, rad, rad_valid), y))

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(label_smoothing=0.1),
                batches=batches, steps=steps)
