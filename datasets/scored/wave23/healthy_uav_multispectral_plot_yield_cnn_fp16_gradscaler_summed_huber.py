"""Healthy: UAV multispectral plot-yield CNN under fp16 autocast with a working GradScaler.

What a naive monitor would flag: (1) training runs in float16 autocast; (2) the loss is a
*summed* Huber loss over the plots of the batch (reduction="sum", as in the breeding-trial code
it comes from), so it starts at about a hundred; (3) GradScaler starts at scale 65536, the
scaled fp16 gradients overflow on the first six steps, and the scaler skips those optimizer
steps (the parameters do not move at all, an exactly-zero update) while it halves the scale
down to 1024, then grows it again every 40 clean steps.

Why it is healthy: that is GradScaler working as designed -- inf/NaN gradients are detected and
the step skipped, the scale settles, and every step that is taken has finite, correctly
unscaled gradients. The loss is finite throughout and falls from ~100 to ~1-2;
the learning rate is sized for the summed loss. SGD+momentum, small BN CNN on 5-band
(B, G, R, red-edge, NIR) plot images -> yield (t/ha).

ORIGIN = None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP docs/recipe (GradScaler skips steps whose gradients contain inf/NaN and "
          "backs off the scale); UAV multispectral yield prediction CNNs for breeding plots "
          "(e.g. Nevavuori et al. 2019)")


class PlotCNN(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(5, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1, stride=2), nn.BatchNorm2d(ch), nn.ReLU(),
            nn.Conv2d(ch, 2 * ch, 3, padding=1, stride=2), nn.BatchNorm2d(2 * ch), nn.ReLU(),
        )
        self.head = nn.Linear(2 * ch, 1)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3))).squeeze(-1)


def _plots(g, n):
    lai = 0.5 + 3.5 * torch.rand(n, generator=g)                  # leaf area index
    stress = torch.rand(n, generator=g)                           # water stress
    patchy = torch.rand(n, 1, 12, 12, generator=g) < (0.1 + 0.3 * stress[:, None, None, None])
    cover = (1 - torch.exp(-0.5 * lai))[:, None, None, None] * (1 - 0.6 * patchy.float())
    soil = torch.tensor([0.10, 0.14, 0.18, 0.22, 0.28])[None, :, None, None]
    veg = torch.tensor([0.04, 0.08, 0.05, 0.25, 0.45])[None, :, None, None]
    veg = veg * (1 - 0.3 * stress[:, None, None, None])
    img = cover * veg + (1 - cover) * soil
    img = img + 0.01 * torch.randn(n, 5, 12, 12, generator=g)
    img = (img - img.mean((0, 2, 3), keepdim=True)) / img.std((0, 2, 3), keepdim=True)
    yld = 2.0 * torch.log1p(lai) * (1 - 0.5 * stress) + 0.15 * torch.randn(n, generator=g)
    return img, 1.5 + yld


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(17000 + seed)
    ch = [8, 12, 10][seed % 3]
    bs = [48, 32, 40][seed % 3]
    lr = [2e-4, 3e-4, 1.5e-4][seed % 3]          # sized for a loss summed over the batch
    steps = 120
    torch.manual_seed(seed)
    model = PlotCNN(ch)
    x, y = _plots(g, bs * steps)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu", init_scale=65536.0, growth_interval=40)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(reduction="sum", delta=1.0),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=scaler)
