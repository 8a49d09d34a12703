"""DCGAN-style generator used as a neural shading renderer: a 6-d attribute vector (tilt, saddle,
bowl and ripple coefficients) is decoded by a ConvTranspose/BatchNorm/ReLU stack with a tanh output into a 32x32
image and trained with L1 against the rendered shading field. The DCGAN weights_init helper was copy-pasted
so that BatchNorm layers get the same N(0, 0.02) as the convolutions instead of N(1, 0.02): every
BatchNorm gamma starts at ~0.02 (with random sign), so each normalised block emits activations ~50x
smaller than intended and the tanh output starts ~100x smaller than with the intended init (~1e-3 vs ~0.07). With the DCGAN recipe
(Adam, lr 2e-4, beta1 0.5) gamma and the output weights can only grow by ~2e-4 per step, so the
renderer stays stuck near a flat grey image and the L1 loss barely moves (no NaN). Fix: initialise the
norm scales as the recipe says, N(1, 0.02)."""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "gen.1"
SOURCE = ("PyTorch DCGAN tutorial weights_init (Conv: N(0,0.02); BatchNorm: N(1,0.02), bias 0); "
          "forum reports of generators producing blank/grey images after initialising BN weights with "
          "the conv std")


def weights_init(m, fixed):
    name = m.__class__.__name__
    if name.find("Conv") != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif name.find("BatchNorm") != -1:
        nn.init.normal_(m.weight, 1.0 if fixed else 0.0, 0.02)
        nn.init.constant_(m.bias, 0.0)


class Renderer(nn.Module):
    def __init__(self, nz=6, ngf=12):
        super().__init__()
        self.gen = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False), nn.Tanh(),
        )

    def forward(self, attrs):
        return self.gen(attrs[:, :, None, None])


def _shaded(g, n, S=32):
    """Smooth shading fields (tilt, saddle, bowl, ripple) controlled by a 6-d attribute vector."""
    a = torch.rand(n, 6, generator=g) * 2 - 1
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, S), torch.linspace(-1, 1, S), indexing="ij")
    c = [v[:, None, None] for v in a.unbind(1)]
    field = (1.2 * c[0] * xx + 1.2 * c[1] * yy + c[2] * xx * yy + c[3] * (xx ** 2 - yy ** 2)
             + 0.5 * c[4] * torch.cos(3 * xx) + 0.5 * c[5] * torch.cos(3 * yy))
    return a, (0.8 * torch.tanh(field))[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Renderer()
    model.apply(lambda m: weights_init(m, fixed))
    attrs, imgs = _shaded(g, 512)
    steps, bs = 80, 16
    batches = []
    for s in range(steps):
        idx = torch.randint(0, attrs.shape[0], (bs,), generator=g)
        batches.append((attrs[idx], imgs[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0.5, 0.999))
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
