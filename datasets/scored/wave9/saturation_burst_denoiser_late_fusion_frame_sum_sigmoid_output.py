"""Burst (multi-frame) photo denoiser in the KPN/burst-fusion family: a shared per-frame CNN
predicts a clean-image logit map for each of the 8 noisy burst frames, the per-frame predictions
are fused and a sigmoid maps the fused logit to [0, 1] intensities (MSE to the clean frame).  The
fusion step was written as ``logits.sum(1)`` instead of ``logits.mean(1)``.  Burst frames are
nearly identical, so the fused logit is ~8x a single frame's and, worse, the gradient reaching the
shared per-frame CNN is 8x larger too: after the first SGD updates the fused logits are tens of
units large on every pixel, the output sigmoid ``out_act`` is saturated at 0/1, its derivative
vanishes and the MSE stops moving -- a finite stall at the loss of a binarised image.  The fix is
to average the frame predictions (fused logits of unit scale)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = ("Mildenhall et al. 2018 burst denoising with kernel prediction networks; Godard et al. "
          "2018 deep burst denoising (per-frame network + fusion); sum-vs-mean fusion bug reports")


class BurstDenoiser(nn.Module):
    def __init__(self, c=16, fuse="sum"):
        super().__init__()
        self.fuse = fuse
        self.frame_net = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, 1, 3, padding=1))
        self.out_act = nn.Sigmoid()

    def forward(self, burst):                        # (B, T, 1, H, W)
        B, T = burst.shape[:2]
        logits = self.frame_net(burst.flatten(0, 1)).unflatten(0, (B, T))
        fused = logits.sum(1) if self.fuse == "sum" else logits.mean(1)
        return self.out_act(fused)


def _bursts(g, n, T=8, s=16):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    noisy, clean = [], []
    for _ in range(n):
        k = (0.3 + 0.6 * torch.rand(2, 2, generator=g)) * torch.randn(2, 2, generator=g).sign()
        ph = 6.28 * torch.rand(2, generator=g)
        img = 0.5 + 0.22 * (torch.sin(k[0, 0] * xs + k[0, 1] * ys + ph[0]) + torch.sin(k[1, 0] * xs + k[1, 1] * ys + ph[1]))
        frames = img[None, None] + 0.15 * torch.randn(T, 1, s, s, generator=g)
        noisy.append(frames); clean.append(img[None])
    return torch.stack(noisy), torch.stack(clean)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = BurstDenoiser(fuse="mean" if fixed else "sum")
    pool = [_bursts(g, 8) for _ in range(10)]
    steps = 150
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(out, y):
        return F.mse_loss(out, y)

    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
