"""Unrolled convolutional LISTA denoiser (learned ISTA: analysis conv We, synthesis conv Wd, three
iterations, each with a learned per-channel non-negative soft threshold z = ReLU(u - theta)).
Following ISTA, the thresholds are initialised to lambda * sigma with sigma the noise level - but
sigma was written as 25 (the 0-255 pixel convention) while the images are scaled to [0, 1] where it
is 25/255. Every threshold starts at 2.5, far above any analysis response We*y (|u| < ~1), so the
first shrinkage (shrink.0) outputs exactly zero for every coefficient of every image, the later
iterations receive zero codes and zero residual updates, the reconstruction Wd*z is identically 0 and
no gradient reaches We, Wd or the thresholds themselves (ReLU gradient is 0 below the threshold).
The loss stays flat at the mean squared intensity of the clean images (no NaN). Fix: initialise the
thresholds in the data's units (lambda * 25/255)."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "shrink.0"
SOURCE = ("Gregor & LeCun 2010 'Learning Fast Approximations of Sparse Coding' (LISTA) and convolutional "
          "LISTA denoisers (e.g. Sreter & Giryes 2018); threshold set from sigma in 0-255 units while "
          "images are in [0, 1]")

LAMBDA, SIGMA_PIX = 0.1, 25.0


class Shrink(nn.Module):
    """Non-negative soft threshold: ReLU(u - theta), one learned theta per channel."""
    def __init__(self, c, theta0):
        super().__init__()
        self.theta = nn.Parameter(torch.full((1, c, 1, 1), float(theta0)))
        self.act = nn.ReLU()

    def forward(self, u):
        return self.act(u - self.theta)


class ConvLISTA(nn.Module):
    def __init__(self, c=16, k=5, iters=3, theta0=0.01):
        super().__init__()
        self.We = nn.Conv2d(1, c, k, padding=k // 2, bias=False)
        self.Wd = nn.Conv2d(c, 1, k, padding=k // 2, bias=False)
        self.shrink = nn.ModuleList([Shrink(c, theta0) for _ in range(iters)])

    def forward(self, y):
        z = self.shrink[0](self.We(y))
        for s in self.shrink[1:]:
            z = s(z + self.We(y - self.Wd(z)))
        return self.Wd(z)


def _clean(g, n, S=24):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, S), torch.linspace(0, 1, S), indexing="ij")
    img = 0.2 + 0.2 * torch.rand(n, 1, 1, generator=g) * xx
    for _ in range(3):
        cy, cx = torch.rand(n, 1, 1, generator=g), torch.rand(n, 1, 1, generator=g)
        r = 0.1 + 0.2 * torch.rand(n, 1, 1, generator=g)
        img = img + 0.5 * torch.rand(n, 1, 1, generator=g) * (((yy - cy) ** 2 + (xx - cx) ** 2) < r ** 2).float()
    return img.clamp(0, 1)[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    sigma = SIGMA_PIX / 255.0 if fixed else SIGMA_PIX          # bug: sigma left in pixel units
    model = ConvLISTA(theta0=LAMBDA * sigma)
    clean = _clean(g, 256)
    steps, bs = 100, 16
    batches = []
    for s in range(steps):
        idx = torch.randint(0, clean.shape[0], (bs,), generator=g)
        x = clean[idx]
        noisy = x + (SIGMA_PIX / 255.0) * torch.randn(x.shape, generator=g)
        batches.append((noisy, x))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
