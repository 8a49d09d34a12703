"""Generative Latent Optimization (Bojanowski et al. 2018): no encoder; every training image
owns a learnable latent code in an nn.Embedding table, the codes are projected onto the unit
sphere in forward, and a small deconvolutional generator maps them to 16x16 images. The input
is an integer image id. Each step only the 32 rows of the batch receive gradient, so >90% of
the latent table has exactly-zero gradients at every step, and the per-step loss is noisy
because different images are revisited at different points of their optimisation. This is
normal for GLO: the loss falls steadily and nothing is wrong."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Bojanowski et al. 2018 'Optimizing the Latent Space of Generative Networks' (GLO); "
          "per-sample latent tables with sparse gradients")


class GLO(nn.Module):
    def __init__(self, n_images, zdim=16, c=32):
        super().__init__()
        self.latents = nn.Embedding(n_images, zdim)
        nn.init.normal_(self.latents.weight)
        self.fc = nn.Linear(zdim, c * 4 * 4)
        self.gen = nn.Sequential(
            nn.ConvTranspose2d(c, c, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(c, c // 2, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c // 2, 1, 3, padding=1), nn.Sigmoid())
        self.c = c

    def forward(self, ids):
        z = F.normalize(self.latents(ids), dim=1)
        return self.gen(F.relu(self.fc(z)).view(-1, self.c, 4, 4))


def _digits(g, n, size=16):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    a = torch.rand(n, generator=g) * 3.1416
    r = 0.3 + 0.4 * torch.rand(n, generator=g)
    w = 0.15 + 0.1 * torch.rand(n, generator=g)
    ring = torch.exp(-((torch.sqrt(xx ** 2 + yy ** 2)[None] - r[:, None, None]) ** 2) / (w[:, None, None] ** 2) * 2)
    bar = torch.exp(-((xx[None] * torch.cos(a)[:, None, None] + yy[None] * torch.sin(a)[:, None, None]) ** 2) / 0.02)
    pick = (torch.rand(n, generator=g) < 0.5).float()[:, None, None]
    return (pick * ring + (1 - pick) * bar).clamp(0, 1)[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(15000 + seed)
    N = 512
    imgs = _digits(g, N)
    model = GLO(N)
    steps, bs = 200, 32
    batches = []
    for s in range(steps):
        ids = torch.randint(0, N, (bs,), generator=g)
        batches.append((ids, imgs[ids]))
    opt = torch.optim.Adam([{"params": model.latents.parameters(), "lr": 1e-2},
                            {"params": [p for n_, p in model.named_parameters() if not n_.startswith("latents")],
                             "lr": 2e-3}])
    return dict(model=model, optimizer=opt,
                loss_fn=lambda out, y: F.binary_cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
