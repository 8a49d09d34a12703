"""Masked-autoencoder pre-training (MAE) with a tiny ViT: 16 patches of 4x4 pixels, a random
subset is masked each step, only the visible tokens go through the encoder, a light decoder with
mask tokens reconstructs every patch, and -- as in MAE -- the loss is the per-patch MSE averaged
over the *masked* patches only.  The masking ratio itself is sampled per step (0.5-0.85, a common
curriculum/robustness trick), so the loss is averaged over a different number of patches every
step and the number of tokens the encoder sees changes.  Together with the random masks this makes
the loss curve jumpy, and the visible patches receive no reconstruction gradient at all.  All of
this is by design; the reconstruction loss falls steadily underneath the noise."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("He et al. 2022 'Masked Autoencoders Are Scalable Vision Learners' (loss on masked patches "
          "only, random_masking with argsort of noise); facebookresearch/mae models_mae.py")


class TinyMAE(nn.Module):
    def __init__(self, p=4, img=16, d=32, dd=24):
        super().__init__()
        self.p, self.n = p, (img // p) ** 2
        self.patch_embed = nn.Linear(3 * p * p, d)
        self.pos = nn.Parameter(0.02 * torch.randn(1, self.n, d))
        self.encoder = nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True, norm_first=True)
        self.enc_norm = nn.LayerNorm(d)
        self.dec_embed = nn.Linear(d, dd)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, dd))
        self.dec_pos = nn.Parameter(0.02 * torch.randn(1, self.n, dd))
        self.decoder = nn.TransformerEncoderLayer(dd, 4, 48, dropout=0.0, batch_first=True, norm_first=True)
        self.dec_pred = nn.Linear(dd, 3 * p * p)

    def patchify(self, img):
        B, C, H, W = img.shape; p = self.p
        x = img.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(B, self.n, p * p * C)

    def forward(self, img, noise, n_keep):
        x = self.patch_embed(self.patchify(img)) + self.pos
        keep = int(n_keep[0])
        ids_shuffle = noise.argsort(1); ids_restore = ids_shuffle.argsort(1)
        ids_keep = ids_shuffle[:, :keep]
        x = torch.gather(x, 1, ids_keep[..., None].expand(-1, -1, x.shape[-1]))
        x = self.enc_norm(self.encoder(x))
        y = self.dec_embed(x)
        B = y.shape[0]
        y = torch.cat([y, self.mask_token.expand(B, self.n - keep, -1)], 1)
        y = torch.gather(y, 1, ids_restore[..., None].expand(-1, -1, y.shape[-1])) + self.dec_pos
        pred = self.dec_pred(self.decoder(y))
        mask = torch.ones(B, self.n); mask[:, :keep] = 0
        mask = torch.gather(mask, 1, ids_restore)
        return {"pred": pred, "mask": mask, "target": self.patchify(img)}


def _images(g, n, s=16):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    out = []
    for _ in range(n):
        # smooth natural-image stand-in: a global colour, a colour ramp and a low-frequency texture
        col = torch.randn(3, 1, 1, generator=g)
        ramp = 0.4 * torch.randn(3, 2, 1, 1, generator=g)
        k = (0.2 + 0.3 * torch.rand(2, generator=g)) * torch.randn(2, generator=g).sign()
        ph = 6.28 * torch.rand((), generator=g)
        tex = 0.3 * torch.sin(k[0] * xs + k[1] * ys + ph)
        out.append(col + ramp[:, 0] * (xs / s - 0.5) + ramp[:, 1] * (ys / s - 0.5) + tex
                   + 0.05 * torch.randn(3, s, s, generator=g))
    return torch.stack(out)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyMAE()
    imgs = [_images(g, 16) for _ in range(10)]
    steps = 150
    batches = []
    for i in range(steps):
        ratio = 0.5 + 0.35 * float(torch.rand((), generator=g))
        keep = max(1, int(round(16 * (1 - ratio))))
        noise = torch.rand(16, 16, generator=g)
        batches.append(((imgs[i % len(imgs)], noise, torch.tensor([keep])), torch.zeros(())))

    def loss_fn(out, _):
        per_patch = ((out["pred"] - out["target"]) ** 2).mean(-1)
        return (per_patch * out["mask"]).sum() / out["mask"].sum()

    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, betas=(0.9, 0.95), weight_decay=0.05)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
