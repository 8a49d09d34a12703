"""Masked autoencoder (MAE, He et al. 2021) with random 75% masking and norm_pix_loss.
The per-patch target normalisation is written as (t - mean) / var**0.5, without the 1e-6
of the reference code. The image pool contains a handful of letterboxed frames whose black
bars fill whole 4x4 patches: their variance is exactly 0, so the target is 0/0 = NaN and the
loss turns NaN on the first batch that holds one. fixed=True adds the epsilon: (var + 1e-6)**0.5.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None  # the unguarded division lives in loss_fn (forward_loss of the MAE code)
SOURCE = ("facebookresearch/mae models_mae.forward_loss (norm_pix_loss: target = (target - mean) / "
          "(var + 1.e-6)**.5); re-implementations that drop the eps report NaN loss on images with "
          "flat/padded regions (black borders, letterboxing, zero-padded scans)")

IMG, PATCH, CH = 16, 4, 3
NP = (IMG // PATCH) ** 2
PD = PATCH * PATCH * CH


def patchify(imgs):
    b = imgs.shape[0]
    h = IMG // PATCH
    x = imgs.reshape(b, CH, h, PATCH, h, PATCH)
    x = torch.einsum("nchpwq->nhwpqc", x)
    return x.reshape(b, h * h, PD)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class MAE(nn.Module):
    def __init__(self, seed, dim=64, dec_dim=48, mask_ratio=0.75):
        super().__init__()
        self.mask_ratio = mask_ratio
        self.patch_embed = nn.Linear(PD, dim)
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, NP, dim))
        self.blocks = nn.ModuleList([Block(dim, 4) for _ in range(2)])
        self.norm = nn.LayerNorm(dim)
        self.decoder_embed = nn.Linear(dim, dec_dim)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, dec_dim))
        self.decoder_pos_embed = nn.Parameter(0.02 * torch.randn(1, NP, dec_dim))
        self.decoder_blocks = nn.ModuleList([Block(dec_dim, 4)])
        self.decoder_norm = nn.LayerNorm(dec_dim)
        self.decoder_pred = nn.Linear(dec_dim, PD)
        self.gen = torch.Generator().manual_seed(1000 + seed)  # masking noise

    def random_masking(self, x):
        n, l, d = x.shape
        keep = int(l * (1 - self.mask_ratio))
        noise = torch.rand(n, l, generator=self.gen)
        ids_shuffle = torch.argsort(noise, dim=1)
        ids_restore = torch.argsort(ids_shuffle, dim=1)
        ids_keep = ids_shuffle[:, :keep]
        x_masked = torch.gather(x, 1, ids_keep.unsqueeze(-1).expand(-1, -1, d))
        mask = torch.ones(n, l)
        mask[:, :keep] = 0
        mask = torch.gather(mask, 1, ids_restore)
        return x_masked, mask, ids_restore

    def forward(self, imgs):
        x = self.patch_embed(patchify(imgs)) + self.pos_embed
        x, mask, ids_restore = self.random_masking(x)
        for blk in self.blocks:
            x = blk(x)
        x = self.decoder_embed(self.norm(x))
        n, keep, d = x.shape
        mask_tokens = self.mask_token.expand(n, NP - keep, d)
        x = torch.cat([x, mask_tokens], dim=1)
        x = torch.gather(x, 1, ids_restore.unsqueeze(-1).expand(-1, -1, d))
        x = x + self.decoder_pos_embed
        for blk in self.decoder_blocks:
            x = blk(x)
        return self.decoder_pred(self.decoder_norm(x)), mask


def make_images(n, g):
    """Smooth random colour textures: a few Gaussian blobs plus sensor noise, in [0, 1]."""
    yy, xx = torch.meshgrid(torch.arange(IMG).float(), torch.arange(IMG).float(), indexing="ij")
    k = 4
    cy = torch.rand(n, k, 1, 1, generator=g) * IMG
    cx = torch.rand(n, k, 1, 1, generator=g) * IMG
    s = 2.0 + 4.0 * torch.rand(n, k, 1, 1, generator=g)
    blobs = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s ** 2))  # n,k,H,W
    col = torch.rand(n, k, CH, generator=g)
    img = torch.einsum("nkhw,nkc->nchw", blobs, col)
    img = img + 0.15 * torch.rand(n, CH, 1, 1, generator=g) + 0.03 * torch.randn(n, CH, IMG, IMG, generator=g)
    lo = img.amin(dim=(1, 2, 3), keepdim=True)
    hi = img.amax(dim=(1, 2, 3), keepdim=True)
    return (img - lo) / (hi - lo)  # per-image min-max to [0, 1]


def letterbox(img):
    """Fit a 16x8 (wide) frame into the square canvas with black bars above and below."""
    wide = torch.nn.functional.interpolate(img.unsqueeze(0), size=(IMG // 2, IMG), mode="bilinear",
                                           align_corners=False)[0]
    out = torch.zeros_like(img)
    out[:, IMG // 4: IMG // 4 + IMG // 2, :] = wide
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 160, 16
    n = steps * bs
    data = make_images(n, g)
    # a few wide frames were letterboxed by the preprocessing script; the pool is shuffled
    n_lb = 5
    pos = torch.randperm(n, generator=g)[:n_lb]
    for p in pos.tolist():
        data[p] = letterbox(data[p])
    batches = [(data[i * bs:(i + 1) * bs], data[i * bs:(i + 1) * bs]) for i in range(steps)]

    model = MAE(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=1.5e-3, betas=(0.9, 0.95), weight_decay=0.05)
    eps = 1e-6 if fixed else 0.0

    def loss_fn(out, imgs):
        pred, mask = out
        target = patchify(imgs)
        mean = target.mean(dim=-1, keepdim=True)
        var = target.var(dim=-1, keepdim=True)
        if eps:
            target = (target - mean) / (var + eps) ** 0.5
        else:
            target = (target - mean) / var ** 0.5
        loss = ((pred - target) ** 2).mean(dim=-1)
        return (loss * mask).sum() / mask.sum()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
