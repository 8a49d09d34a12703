"""CoordConv classifier (tanh activations) for small shapes at random positions: CoordConv layers
are dropped into detection/classification backbones so that later heads can use position. The two
coordinate channels appended to the image are the raw pixel indices (0..31) instead of CoordConv's
[-1, 1] ramps. The
first conv layer therefore sums terms of magnitude ~10-50 and its pre-activations are far out on
the tanh tails for almost every pixel: the tanh outputs are +-1 plateaus that encode only the
position in the frame, not the image content, and the derivative 1 - tanh^2 ~ 1e-6..1e-20 blocks
the gradient that would have to retune the filters toward the object. Only a thin band of pixels
stays in the linear range, the classifier hardly sees the shapes and the cross-entropy plateaus
near ln(3) (finite throughout). Fix: coordinate
channels normalised to [-1, 1] as in the CoordConv paper (smaller pre-activations)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "net.0"
SOURCE = ("Liu et al. 2018 'An intriguing failing of convolutional neural networks and the CoordConv "
          "solution' (AddCoords scales to [-1, 1]); re-implementations that append raw i/j indices "
          "and use tanh report a loss stuck at the mean-position baseline")


class AddCoords(nn.Module):
    def __init__(self, normalise):
        super().__init__()
        self.normalise = normalise

    def forward(self, x):
        b, _, h, w = x.shape
        yy = torch.arange(h, dtype=x.dtype).view(1, 1, h, 1).expand(b, 1, h, w)
        xx = torch.arange(w, dtype=x.dtype).view(1, 1, 1, w).expand(b, 1, h, w)
        if self.normalise:
            yy = yy / (h - 1) * 2 - 1
            xx = xx / (w - 1) * 2 - 1
        return torch.cat([x, xx, yy], 1)


class CoordClassifier(nn.Module):
    def __init__(self, normalise=False, ch=16):
        super().__init__()
        self.coords = AddCoords(normalise)
        self.net = nn.Sequential(
            nn.Conv2d(3, ch, 3, padding=1), nn.Tanh(),
            nn.Conv2d(ch, ch, 3, padding=1), nn.Tanh(),
        )
        self.fc = nn.Linear(ch, 3)

    def forward(self, img):
        return self.fc(self.net(self.coords(img)).amax((2, 3)))


def _batch(g, n, H=32):
    yy, xx = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(H, dtype=torch.float32), indexing="ij")
    pos = torch.rand(n, 2, generator=g) * (H - 10) + 5
    r2 = (xx - pos[:, 0, None, None]) ** 2 + (yy - pos[:, 1, None, None]) ** 2
    lab = torch.randint(0, 3, (n,), generator=g)
    blob = torch.exp(-r2 / 6.0)
    ring = torch.exp(-(r2.sqrt() - 3.5) ** 2 / 1.0)
    img = torch.where(lab[:, None, None] == 0, blob, torch.where(lab[:, None, None] == 1, -blob, ring))
    img = img[:, None] + 0.05 * torch.randn(n, 1, H, H, generator=g)
    return img, lab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CoordClassifier(normalise=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    pool = [_batch(g, 16) for _ in range(20)]
    steps = 100
    batches = [pool[i % len(pool)] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
