"""BatchNorm-free MobileNet-style texture classifier (stem conv, six depthwise-separable blocks of
3x3 depthwise conv + ReLU and 1x1 pointwise conv + ReLU, global average pool, linear head),
trained with the TF-slim MobileNet optimizer (RMSprop, decay 0.9, momentum 0.9, eps 1.0, lr
0.045), that reuses torchvision's MobileNetV2 init loop, `kaiming_normal_(w, mode="fan_out")` for
every conv. With BatchNorm that choice is harmless; without it, it is not: for the 1-channel stem
(fan_out = 16*9 vs fan_in = 9) and above all for each depthwise conv (groups = C, weight (C, 1, 3,
3): PyTorch's fan_out is 9*C while each output only sums 9 inputs) the weight std is sqrt(C) times
too small, so the activation RMS shrinks by 3-6x at every such layer, starting at the stem. After
six blocks the features reaching the head are ~1e-6 of the input scale from step 0; the head sees
constant features, the gradients to the early layers are scaled down the same way, and with eps =
1.0 RMSprop cannot re-amplify such tiny gradients: the loss stays at log(6). The fixed run uses
mode="fan_in", which keeps the scale; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "stem"
SOURCE = ("torchvision MobileNetV2 weight init (kaiming_normal_ mode='fan_out' for every conv) reused "
          "in a BatchNorm-free variant; known pattern: PyTorch's fan computation for a depthwise weight "
          '(C, 1, k, k) gives fan_out = C*k*k although each output sums only k*k inputs')


class DWSeparable(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin)
        self.pw = nn.Conv2d(cin, cout, 1)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.pw(self.act(self.dw(x))))


class MobileNetNoBN(nn.Module):
    def __init__(self, n_classes=6):
        super().__init__()
        self.stem = nn.Conv2d(1, 16, 3, padding=1)
        cfg = [(16, 32, 1), (32, 32, 2), (32, 48, 1), (48, 48, 1), (48, 64, 2), (64, 64, 1)]
        self.blocks = nn.Sequential(*[DWSeparable(a, b, s) for a, b, s in cfg])
        self.head = nn.Linear(64, n_classes)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = self.blocks(x)
        return self.head(x.mean(dim=(2, 3)))


def init_weights(model, mode):
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode=mode, nonlinearity="relu")
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.1)
            nn.init.zeros_(m.bias)


def _make_batch(g, n):
    # texture classes: gratings with class-specific orientation and frequency, random phase
    y = torch.randint(0, 6, (n,), generator=g)
    ii = torch.arange(16).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    ang = (y % 3).float() * 1.047
    freq = 0.6 + 0.9 * (y // 3).float()
    phase = torch.rand(n, generator=g) * 6.283
    arg = (xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None])
    x = torch.sin(freq[:, None, None] * arg + phase[:, None, None])[:, None]
    return x + 0.4 * torch.randn(x.shape, generator=g), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 32) for _ in range(10)]
    model = MobileNetNoBN()
    init_weights(model, mode="fan_in" if fixed else "fan_out")
    opt = torch.optim.RMSprop(model.parameters(), lr=0.045, alpha=0.9, eps=1.0, momentum=0.9)
    steps = 120
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
