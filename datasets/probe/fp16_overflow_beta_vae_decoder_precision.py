"""beta-VAE on dSprites-like 12x12 sprites with a heteroscedastic Gaussian decoder that predicts a
per-pixel log-precision and returns precision = exp(log_prec). Border pixels are always exactly 0,
so the decoder keeps raising their precision; under float16 autocast on CPU the exp runs in half
precision and overflows (> 65504 once log_prec > 11.1) mid-run, making the NLL inf on every step
(the GradScaler only skips steps). fixed=True computes exp(log_prec) in float32.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "decoder"
SOURCE = ("beta-VAE (Higgins et al. 2017) on dSprites with a learned-variance Gaussian decoder "
          "(Rybkin et al. 2021 'sigma-VAE'); AMP reports of VAE decoders overflowing in fp16 "
          "(e.g. SDXL VAE NaNs in half precision, fixed by running that part in fp32)")

SIDE, LATENT, HID, BATCH, STEPS, BETA = 12, 6, 128, 64, 240, 4.0
D = SIDE * SIDE


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(D, HID), nn.ReLU(), nn.Linear(HID, HID), nn.ReLU())
        self.mu, self.logvar = nn.Linear(HID, LATENT), nn.Linear(HID, LATENT)

    def forward(self, x):
        h = self.net(x)
        return self.mu(h), self.logvar(h)


class GaussianDecoder(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.net = nn.Sequential(nn.Linear(LATENT, HID), nn.ReLU(), nn.Linear(HID, HID), nn.ReLU())
        self.mean, self.log_prec = nn.Linear(HID, D), nn.Linear(HID, D)

    def forward(self, z):
        h = self.net(z)
        log_prec = self.log_prec(h)
        prec = log_prec.float().exp() if self.fixed else log_prec.exp()
        return self.mean(h), log_prec, prec


class BetaVAE(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = GaussianDecoder(fixed)

    def forward(self, x):
        mu, logvar = self.encoder(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        mean, log_prec, prec = self.decoder(z)
        return dict(mean=mean, log_prec=log_prec, prec=prec, mu=mu, logvar=logvar)


def elbo_loss(out, x):
    nll = 0.5 * (out["prec"] * (x - out["mean"]) ** 2 - out["log_prec"] + math.log(2 * math.pi)).sum(-1)
    kl = -0.5 * (1 + out["logvar"] - out["mu"].pow(2) - out["logvar"].exp()).sum(-1)
    return (nll + BETA * kl).mean()


def _sprites(n, g):
    yy, xx = torch.meshgrid(torch.arange(SIDE).float(), torch.arange(SIDE).float(), indexing="ij")
    cx = 3 + 6 * torch.rand(n, 1, 1, generator=g)
    cy = 3 + 6 * torch.rand(n, 1, 1, generator=g)
    r = 1.2 + 1.3 * torch.rand(n, 1, 1, generator=g)
    square = torch.rand(n, 1, 1, generator=g) < 0.5
    d_circ = ((xx - cx) ** 2 + (yy - cy) ** 2).sqrt()
    d_sq = torch.maximum((xx - cx).abs(), (yy - cy).abs())
    img = torch.where(square, (d_sq <= r).float(), (d_circ <= r).float())
    img[:, 0, :] = img[:, -1, :] = img[:, :, 0] = img[:, :, -1] = 0.0  # frame is always background
    return img.reshape(n, D)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(STEPS):
        x = _sprites(BATCH, g)
        batches.append((x, x))
    model = BetaVAE(fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cpu")
    return dict(model=model, optimizer=opt, loss_fn=elbo_loss, batches=batches, steps=STEPS,
                amp_dtype=torch.float16, scaler=scaler)
