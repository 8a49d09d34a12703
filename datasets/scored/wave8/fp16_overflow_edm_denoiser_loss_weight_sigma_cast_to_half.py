"""EDM-style denoiser (Karras et al. 2022) on an 8-d tabular/latent dataset, trained under
float16 autocast with a GradScaler.  The port follows EDMPrecond/EDMLoss: noise levels are drawn
log-normally (P_mean=-1.2, P_std=1.2), the network sees c_in*x and c_noise=ln(sigma)/4, and the
per-sample loss weight is lambda(sigma) = (sigma^2 + sigma_data^2) / (sigma*sigma_data)^2, i.e.
~1/sigma^2 for small sigma.  The official code keeps sigma and the weight in float32; this port
"matches dtypes" by casting sigma to the network's compute dtype (fp16 under autocast) before
computing the preconditioning and the weight.  Whenever a batch contains a sample with
sigma < ~0.004 (a few per thousand batches of 256 draws, several times per run), lambda passes 65504
and becomes +inf in half precision; the loss is inf/NaN at that step (the scaler only skips the
step, the logged loss is not finite).  The fix computes sigma-dependent coefficients in float32,
which is all the official implementation does differently."""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "loss_weight"
SOURCE = ("Karras et al. 2022 'Elucidating the Design Space of Diffusion-Based Generative Models' "
          "(EDMPrecond / EDMLoss, sigma kept in fp32); fp16 loss-weight overflow reports in diffusion ports")

D, HID, SIGMA_DATA = 8, 96, 0.5


class EDMLossWeight(nn.Module):
    def __init__(self, half_dtype_sigma):
        super().__init__()
        self.half_dtype_sigma = half_dtype_sigma

    def forward(self, sigma, like):
        if self.half_dtype_sigma:
            sigma = sigma.to(like.dtype)           # "match the network dtype"
        return (sigma ** 2 + SIGMA_DATA ** 2) / (sigma * SIGMA_DATA) ** 2


class EDMDenoiser(nn.Module):
    def __init__(self, half_dtype_sigma):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(D + 2, HID), nn.SiLU(), nn.Linear(HID, HID), nn.SiLU(),
                                 nn.Linear(HID, D))
        self.loss_weight = EDMLossWeight(half_dtype_sigma)

    def forward(self, x, sigma):
        s = sigma[:, None]
        c_skip = SIGMA_DATA ** 2 / (s ** 2 + SIGMA_DATA ** 2)
        c_out = s * SIGMA_DATA / (s ** 2 + SIGMA_DATA ** 2).sqrt()
        c_in = 1 / (s ** 2 + SIGMA_DATA ** 2).sqrt()
        c_noise = s.log() / 4
        f = self.net(torch.cat([c_in * x, torch.sin(c_noise), torch.cos(c_noise)], 1))
        denoised = c_skip * x + c_out * f
        return {"denoised": denoised, "weight": self.loss_weight(s, f)}


def edm_loss(out, y):
    return (out["weight"] * (out["denoised"] - y) ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(6, D, generator=g) * 0.5

    def sample(n):
        y = centers[torch.randint(0, 6, (n,), generator=g)] + 0.15 * torch.randn(n, D, generator=g)
        sigma = torch.exp(-1.2 + 1.2 * torch.randn(n, generator=g))
        x = y + sigma[:, None] * torch.randn(n, D, generator=g)
        return (x, sigma), y

    steps = 250
    batches = [sample(256) for _ in range(steps)]
    model = EDMDenoiser(half_dtype_sigma=not fixed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=edm_loss, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
