"""Video frame interpolation CNN (two input frames -> middle frame, predicted as a residual on top
of the frame average, as in many DAIN/SepConv-style baselines).  The momentum-SGD learning rate 2.0
was copied from the BatchNorm variant of the network (where scale invariance tolerates it), but
this compact version has no normalisation and reads raw, non-centred [0, 1] frames.  The first SGD steps are huge,
push the first conv's biases/weights so that its pre-activations are negative on every pixel, and
most or all ReLU units of ``enc.0`` die; with zero ReLU gradient nothing upstream can recover,
the output collapses towards the head bias and the loss plateaus at (or drifts above) the
residual's variance, finite throughout.
The fix is a lower learning rate (0.05)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "enc.0"
SOURCE = ("cs231n 'dying ReLU' note (large learning rate kills ReLUs); SepConv/DAIN-style residual "
          "frame interpolation baselines; forum reports of interpolation nets outputting the frame "
          "average after a few iterations")


class InterpNet(nn.Module):
    def __init__(self, c=24):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(6, c, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.dec = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, f0, f1):
        x = torch.cat([f0, f1], 1)
        return 0.5 * (f0 + f1) + self.dec(self.enc(x))


def _clip(g, n, s=16):
    # a textured scene under a steady horizontal camera pan: middle frame != average of neighbours
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    f0s, f1s, mids = [], [], []
    for _ in range(n):
        k = (0.6 + 0.8 * torch.rand(3, 2, generator=g)) * torch.randn(3, 2, generator=g).sign()
        ph = 6.28 * torch.rand(3, generator=g)
        v = torch.tensor([1.5, 0.0])
        def frame(t):
            return 0.5 + 0.5 * torch.sin(k[:, 0, None, None] * (xs - v[0] * t) + k[:, 1, None, None] * (ys - v[1] * t) + ph[:, None, None])
        f0s.append(frame(-1.0)); f1s.append(frame(1.0)); mids.append(frame(0.0))
    return (torch.stack(f0s), torch.stack(f1s)), torch.stack(mids)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = InterpNet()
    pool = [_clip(g, 8) for _ in range(10)]
    steps = 100
    batches = [pool[i % len(pool)] for i in range(steps)]
    lr = 0.05 if fixed else 2.0

    def loss_fn(out, y):
        return F.mse_loss(out, y)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
