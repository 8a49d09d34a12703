"""Self-supervised rotation prediction (RotNet, Gidaris et al. 2018): a plain 5-layer conv net
classifies which of 0/90/180/270 degrees an image was rotated by, trained with momentum SGD. A
custom weights_init calls nn.init.uniform_(m.weight) without bounds, which draws from U(0, 1):
every weight positive with mean 0.5 instead of zero-mean with std ~ 1/sqrt(fan_in). With fan-in
9*C each conv multiplies the activation scale by roughly 0.5*9*C, so the logits are ~1e8 at
step 0 and the first cross-entropy gradient is of the same order. That single SGD step throws
every conv far into negative territory, all ReLUs go silent, the classifier sees a constant
zero feature and the loss sits at ln 4 = 1.386 for the rest of the run: a silent stall with no
NaN after a one-step explosion. The same run with kaiming-normal init trains to near zero."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("torch.nn.init.uniform_(tensor, a=0.0, b=1.0) defaults (PyTorch docs) hit by weights_init "
          "helpers that call it without bounds; RotNet (Gidaris et al., ICLR 2018) pretext task")


class RotNet(nn.Module):
    def __init__(self):
        super().__init__()
        chans = [3, 16, 16, 24, 24, 32]
        layers = []
        for i in range(5):
            layers += [nn.Conv2d(chans[i], chans[i + 1], 3, padding=1, stride=2 if i in (1, 3) else 1), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(32, 4)

    def forward(self, x):
        return self.classifier(self.features(x).mean(dim=(2, 3)))


def _weights_init(m, fixed):
    if isinstance(m, (nn.Conv2d, nn.Linear)):
        if fixed:
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        else:
            nn.init.uniform_(m.weight)                 # U(0, 1) - the bug
        nn.init.zeros_(m.bias)


def _rotated_batch(g, n=32, hw=16):
    # structured images (oriented gradient + blob) so that rotation is recognisable
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, hw), torch.linspace(-1, 1, hw), indexing="ij")
    imgs = []
    for _ in range(n):
        cy, cx = (torch.rand(2, generator=g) * 0.6 - 0.9).tolist()
        blob = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 0.1)
        ramp = (yy + 1) / 2
        col = torch.rand(3, 1, 1, generator=g)
        imgs.append(col * blob + (1 - col) * ramp * 0.5)
    imgs = torch.stack(imgs) + 0.05 * torch.randn(n, 3, hw, hw, generator=g)
    k = torch.randint(0, 4, (n,), generator=g)
    rot = torch.stack([torch.rot90(imgs[i], int(k[i]), dims=(1, 2)) for i in range(n)])
    return rot, k


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RotNet()
    model.apply(lambda m: _weights_init(m, fixed))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    steps = 150
    batches = [_rotated_batch(g) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
