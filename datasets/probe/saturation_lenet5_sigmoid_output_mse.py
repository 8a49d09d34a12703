"""LeNet-5 (tanh convolutions, average pooling) with the textbook output layer of the 1990s: ten sigmoid
units trained with the quadratic cost against one-hot targets (LeCun 1998 / Nielsen ch.1 style). Nine of
ten targets are 0, so the first large SGD+momentum steps drive every output pre-activation far negative
for every image; the output sigmoids saturate at ~0, sigma'(z) ~ 0 multiplies every gradient (Nielsen's
'learning slowdown'), the positive class can no longer be raised and the cost sits at ~0.5 for the whole run.
fixed=True: the output layer is linear (no sigmoid) with the same quadratic cost, lr and data.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = ("Nielsen, Neural Networks and Deep Learning ch.3 'learning slowdown' of saturated sigmoid output "
          "neurons under the quadratic cost; LeCun et al. 1998 LeNet-5; Stack Overflow threads on "
          "nn.Sigmoid() + nn.MSELoss classifiers stuck at constant outputs")


class LeNet5(nn.Module):
    def __init__(self, n_cls, fixed):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.Tanh(), nn.AvgPool2d(2, 2),     # 16 -> 8
            nn.Conv2d(6, 16, 5), nn.Tanh(), nn.AvgPool2d(2, 2))               # 8 -> 4 -> 2
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64, 120), nn.Tanh(),
                                        nn.Linear(120, 84), nn.Tanh(), nn.Linear(84, n_cls))
        self.out_act = nn.Identity() if fixed else nn.Sigmoid()

    def forward(self, x):
        return self.out_act(self.classifier(self.features(x)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_cls, H, bs, steps = 10, 16, 64, 120
    templ = (torch.rand(n_cls, 1, H, H, generator=g) < 0.3).float()
    templ = nn.functional.avg_pool2d(templ, 3, 1, 1)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = (templ[y] + 0.2 * torch.randn(bs, 1, H, H, generator=g)).clamp(0, 1)
        x = (x - 0.3) / 0.3
        batches.append((x, nn.functional.one_hot(y, n_cls).float()))
    model = LeNet5(n_cls, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loss_fn = lambda out, t: 0.5 * ((out - t) ** 2).sum(1).mean()      # quadratic cost
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
