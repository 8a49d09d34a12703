"""Healthy run. Adversarial autoencoder (Makhzani et al. 2016) squeezed into one module and one
optimizer: a conv encoder/decoder reconstructs 16x16 patches, and a small latent discriminator is
trained to tell prior samples N(0, I) (passed in as the second input) from encoder codes, while a
gradient-reversal layer between encoder and discriminator makes the encoder maximise the same BCE.
Forward and loss run under bf16 autocast (network outputs are bf16, the loss is accumulated in fp32).
Things that look alarming but are expected: the adversarial term never goes down the way a loss
should (it starts at 2 ln 2 = 1.39 and wanders between ~0.8 and ~1.4 as the two players balance), the
encoder receives gradients with flipped sign through the reversal layer, and the critic's logits
swing from batch to batch. The reconstruction term dominates the total and decreases steadily (~40 ->
~2 per patch), so the run is fine."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Makhzani et al. 2016 'Adversarial Autoencoders'; Ganin & Lempitsky 2015 gradient reversal "
          "layer for single-optimizer adversarial training")


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        ctx.lam = lam
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return -ctx.lam * g, None


class AAE(nn.Module):
    def __init__(self, zdim=4, lam=1.0):
        super().__init__()
        self.lam = lam
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(16, 32, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(512, zdim),
        )
        self.decoder_fc = nn.Linear(zdim, 512)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.ConvTranspose2d(16, 1, 4, 2, 1),
        )
        self.critic = nn.Sequential(nn.Linear(zdim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32),
                                    nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x, z_prior):
        z = self.encoder(x)
        recon = self.decoder(F.leaky_relu(self.decoder_fc(z), 0.2).view(-1, 32, 4, 4))
        d_fake = self.critic(GradReverse.apply(z, self.lam))
        d_real = self.critic(z_prior)
        return {"recon": recon, "d_fake": d_fake, "d_real": d_real}


def loss_fn(out, x):
    rec = F.mse_loss(out["recon"].float(), x, reduction="sum") / x.shape[0]
    adv = (F.binary_cross_entropy_with_logits(out["d_real"].float(), torch.ones_like(out["d_real"].float()))
           + F.binary_cross_entropy_with_logits(out["d_fake"].float(), torch.zeros_like(out["d_fake"].float())))
    return rec + adv


def _patches(g, n, S=16):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, S), torch.linspace(-1, 1, S), indexing="ij")
    a = torch.rand(n, 4, 1, 1, generator=g) * 2 - 1
    img = torch.tanh(2 * (a[:, 0] * xx + a[:, 1] * yy) + a[:, 2]) * (0.6 + 0.3 * a[:, 3])
    return img[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = AAE()
    data = _patches(g, 256)
    steps, bs = 150, 16
    batches = []
    for s in range(steps):
        idx = torch.randint(0, data.shape[0], (bs,), generator=g)
        z_prior = torch.randn(bs, 4, generator=g)
        batches.append(((data[idx], z_prior), data[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.5, 0.999))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16, scaler=None)
