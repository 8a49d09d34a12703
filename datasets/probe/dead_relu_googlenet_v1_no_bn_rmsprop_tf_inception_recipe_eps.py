"""GoogLeNet / Inception-v1 style classifier (stem conv, two Inception modules with the
1x1 / 3x3-reduce+3x3 / 5x5-reduce+5x5 / pool-proj branches, ReLU everywhere, no
BatchNorm as in the 2014 network), trained with the RMSprop settings of the TF-slim
Inception recipe -- lr 0.045, decay 0.9, epsilon 1.0 -- ported to torch.optim.RMSprop
as `RMSprop(params, lr=0.045, alpha=0.9)`. The epsilon of 1.0 was dropped, so PyTorch's
default 1e-8 is used.

Mechanism: TF's epsilon=1.0 sits next to sqrt(mean g^2), and for gradients << 1 it makes
RMSprop behave like SGD with lr 0.045; with eps=1e-8 every parameter instead moves by
~lr/sqrt(1-alpha) ~ 0.1 per step whatever its gradient -- far larger than the weights
themselves. The loss spikes to 20-100 on the first steps, the pre-activations are pushed
strongly negative, and the ReLUs stop firing for every input: half of the second stem
conv's channels are dead after 1-2 steps and all of them by the end, so the Inception
modules receive an all-zero map, their branch ReLUs die too, no gradient reaches
anything any more and the loss freezes at ~log(K).

ORIGIN: stem.2.1, the ReLU of the second stem conv: the first layer to go (almost)
completely dead; everything after it only sees zeros and everything before it only
gets zero gradient.

Fix: eps=1.0, the value of the recipe being ported; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "stem.2.1"
SOURCE = ("Szegedy et al. 2014 GoogLeNet; TF-slim / tensorflow models inception training "
          "flags (RMSProp lr 0.045, decay 0.9, epsilon 1.0); timm RMSpropTF docs on the "
          "epsilon difference; forum reports 'loss stuck at ln(num_classes) after switching "
          "to torch RMSprop'.")


def conv_relu(cin, cout, k, **kw):
    return nn.Sequential(nn.Conv2d(cin, cout, k, **kw), nn.ReLU(inplace=True))


class Inception(nn.Module):
    def __init__(self, cin, c1, c3r, c3, c5r, c5, cp):
        super().__init__()
        self.b1 = conv_relu(cin, c1, 1)
        self.b2 = nn.Sequential(conv_relu(cin, c3r, 1), conv_relu(c3r, c3, 3, padding=1))
        self.b3 = nn.Sequential(conv_relu(cin, c5r, 1), conv_relu(c5r, c5, 5, padding=2))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, 1, padding=1), conv_relu(cin, cp, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


class GoogLeNetV1(nn.Module):
    def __init__(self, w, num_classes):
        super().__init__()
        self.stem = nn.Sequential(conv_relu(3, 2 * w, 3, padding=1), nn.MaxPool2d(2),
                                  conv_relu(2 * w, 4 * w, 3, padding=1), nn.MaxPool2d(2))
        self.inc_a = Inception(4 * w, 2 * w, 2 * w, 3 * w, w, w, w)          # -> 7w
        self.inc_b = Inception(7 * w, 3 * w, 3 * w, 4 * w, w, 2 * w, 2 * w)  # -> 11w
        self.dropout = nn.Dropout(0.4)
        self.fc = nn.Linear(11 * w, num_classes)

    def forward(self, x):
        x = self.inc_b(F.max_pool2d(self.inc_a(self.stem(x)), 2))
        return self.fc(self.dropout(F.adaptive_avg_pool2d(x, 1).flatten(1)))


def make_batches(g, steps, bs, num_classes):
    protos = torch.randn(num_classes, 3, 4, 4, generator=g)
    out = []
    for _ in range(steps):
        y = torch.randint(0, num_classes, (bs,), generator=g)
        x = F.interpolate(protos[y], size=32, mode="bilinear", align_corners=False)
        out.append((x + 0.4 * torch.randn(bs, 3, 32, 32, generator=g), y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = [4, 6, 4][seed % 3]
    K = [10, 8, 12][seed % 3]
    bs = [32, 24, 32][seed % 3]
    steps = [110, 100, 120][seed % 3]
    lr = [0.045, 0.045, 0.06][seed % 3]
    model = GoogLeNetV1(w, K)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.9, momentum=0.9,
                              eps=1.0 if fixed else 1e-8)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=make_batches(g, steps, bs, K), steps=steps)
