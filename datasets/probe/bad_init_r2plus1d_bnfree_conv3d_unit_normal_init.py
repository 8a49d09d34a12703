"""Small R(2+1)D video classifier (every 3x3x3 conv factorised into a (1,3,3) spatial
conv, ReLU, and a (3,1,1) temporal conv, Tran et al. 2018) written without BatchNorm for
a tiny-batch clip dataset, with a custom init loop that calls nn.init.normal_(m.weight)
on every Conv3d -- i.e. mean 0, std 1 -- because "normal init" was assumed to be
fan-scaled like the default.

Mechanism: a (1,3,3) conv with C input channels and unit-variance weights multiplies the
activation RMS by ~sqrt(9*C/2), a (3,1,1) conv by ~sqrt(3*M/2); over 3-4 residual-free
(2+1)D blocks the logits are ~1e3-1e5 at step 0, so is the cross-entropy, the gradients
of the lower convs are larger still (they carry the product of all the later gains), and the first SGD steps push the weights to inf: NaN within a few
steps. The activation scale grows geometrically with depth from step 0.

ORIGIN: stem.0, the first (spatial) Conv3d: the blow-up begins there and every
following, equally mis-initialised conv multiplies it.

Fix: kaiming_normal_(mode='fan_in', nonlinearity='relu') for every Conv3d (He init;
torchvision.models.video uses the fan_out variant); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "stem.0"
SOURCE = ("Tran et al. 2018 'A Closer Look at Spatiotemporal Convolutions' R(2+1)D; "
          "torchvision video resnet uses kaiming_normal_; forum reports of "
          "nn.init.normal_(m.weight) with default std=1 giving inf/NaN loss at step 1.")


def conv2plus1d(cin, cout, mid):
    return [nn.Conv3d(cin, mid, (1, 3, 3), padding=(0, 1, 1)), nn.ReLU(inplace=True),
            nn.Conv3d(mid, cout, (3, 1, 1), padding=(1, 0, 0)), nn.ReLU(inplace=True)]


class R2Plus1D(nn.Module):
    def __init__(self, widths, num_classes):
        super().__init__()
        self.stem = nn.Sequential(*conv2plus1d(3, widths[0], 12))
        layers, c = [], widths[0]
        for w in widths[1:]:
            layers += conv2plus1d(c, w, (c + w) // 2)
            layers.append(nn.MaxPool3d((1, 2, 2)))
            c = w
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(c, num_classes)

    def forward(self, clip):  # clip: (B, 3, T, H, W)
        x = self.layers(self.stem(clip))
        return self.fc(x.mean(dim=(2, 3, 4)))


def make_clips(g, steps, bs, T, S, num_classes):
    # each class = a blob of a class-specific colour moving in a class-specific direction
    tint = 0.5 + torch.rand(num_classes, 3, generator=g)
    dirs = torch.tensor([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0], [-1.0, 0.0]])[:num_classes]
    ys_, xs_ = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    out = []
    for _ in range(steps):
        y = torch.randint(0, num_classes, (bs,), generator=g)
        start = torch.rand(bs, 2, generator=g) * S * 0.5 + S * 0.25
        frames = []
        for t in range(T):
            c = start + dirs[y] * (t - T / 2) * 1.2
            d2 = (ys_[None] - c[:, 0, None, None]) ** 2 + (xs_[None] - c[:, 1, None, None]) ** 2
            frames.append(torch.exp(-d2 / 6.0))
        clip = torch.stack(frames, 1)[:, None] * tint[y][:, :, None, None, None]
        clip = clip + 0.1 * torch.randn(clip.shape, generator=g)
        out.append((clip / 0.33, y))  # background ~0, scaled by the dataset std
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    widths = [[8, 16, 16], [8, 12, 16, 24], [12, 16, 24]][seed % 3]
    T = [8, 6, 8][seed % 3]
    bs = [8, 12, 6][seed % 3]
    lr = [0.004, 0.003, 0.004][seed % 3]
    steps = 200
    model = R2Plus1D(widths, num_classes=4)
    for m in model.modules():
        if isinstance(m, nn.Conv3d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=make_clips(g, steps, bs, T, 16, 4), steps=steps)
