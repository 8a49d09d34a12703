"""A BN-free convolutional denoising autoencoder (8 conv / conv-transpose layers) for
zero-mean [-1, 1] texture patches is initialised with the DCGAN recipe `weights_init`
(every Conv/ConvTranspose weight ~ N(0, 0.02)). DCGAN gets away with that because every
layer is followed by BatchNorm; here there is none, so with fan-in 216 each ReLU layer
multiplies the activation scale by ~0.2 and after eight layers the reconstruction is ~1e-5
of the signal. The output is stuck at ~0 (the data mean), gradients to the early layers are
vanishingly small and SGD+momentum barely moves: the loss sits at E[x^2] without ever going
non-finite. Fixed: Kaiming (fan-in, ReLU) init for the convolutions, nothing else changed."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("PyTorch DCGAN tutorial weights_init (normal_(0.0, 0.02)) copied onto a model without "
          "BatchNorm; forum threads 'autoencoder outputs constant / loss not decreasing with DCGAN init'")


class DenoisingAE(nn.Module):
    def __init__(self, c=24):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(c, c, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(c, c, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, 1, 3, padding=1),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def dcgan_weights_init(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
        nn.init.zeros_(m.bias)


def kaiming_init(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
        nn.init.zeros_(m.bias)


def _textures(g, n, size=16):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    imgs = torch.zeros(n, 1, size, size)
    for k in range(3):
        th = torch.rand(n, 1, 1, generator=g) * math.pi
        fr = 0.15 + 0.5 * torch.rand(n, 1, 1, generator=g)
        ph = torch.rand(n, 1, 1, generator=g) * 2 * math.pi
        amp = 0.3 + 0.4 * torch.rand(n, 1, 1, generator=g)
        imgs[:, 0] += amp * torch.sin(fr * (xx * torch.cos(th) + yy * torch.sin(th)) + ph)
    return imgs.clamp(-1, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = DenoisingAE()
    model.apply(kaiming_init if fixed else dcgan_weights_init)
    steps, bs = 120, 32
    clean = _textures(g, 512)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, clean.shape[0], (bs,), generator=g)
        y = clean[idx]
        x = y + 0.3 * torch.randn(y.shape, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.mse_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
