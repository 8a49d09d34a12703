"""BN-folded MobileNetV1 (deploy form) fine-tuned on-device on raw uint8 camera frames.

Mechanism: for on-device fine-tuning a depthwise-separable MobileNetV1 is exported in deploy
form: every BatchNorm is folded into the preceding conv (conv + bias, ReLU), so nothing in
the network re-normalises activations.  The deployed quantised model consumed raw uint8
frames because its input quantisation parameters (scale 1/(255*std), zero point) did the
standardisation; the float fine-tuning script feeds the same raw frames, now as float
0..255, with no standardisation.  The first conv therefore sees inputs ~100x larger (and
with a ~130 offset) than the standardised ones its weights were trained for; its outputs,
and with them every later layer's (ReLU nets are positively homogeneous), are ~100x too
large from step 0.  The logits are in the tens to hundreds, the cross-entropy starts at
10-50, and the oversized gradients of the first layers (which are proportional to the raw
0..255 inputs) make the SGD updates explode: the loss becomes inf/NaN within a few steps.

ORIGIN: ``features.0``, the first (folded) conv: it is the layer that receives the
unscaled inputs and where the 100x scale error enters the network.

Fix: standardise the frames ((x / 255 - mean) / std) as the input quantisation did;
weights, lr and everything else unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "features.0"
SOURCE = ("MobileNetV1 (Howard et al. 2017) deploy graphs with folded BN (TFLite uint8 models take raw 0-255 "
          "input via input quantisation); forum reports 'on-device fine-tuning loss nan when feeding raw uint8 "
          "images to the float model'")


def dw_sep(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin), nn.ReLU(),
                         nn.Conv2d(cin, cout, 1), nn.ReLU())


class MobileNetV1Deploy(nn.Module):
    def __init__(self, w, n_cls, g):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 3, 1, 1), nn.ReLU(),
            dw_sep(w, 2 * w, 1), dw_sep(2 * w, 4 * w, 2), dw_sep(4 * w, 4 * w, 1), dw_sep(4 * w, 8 * w, 2))
        self.fc = nn.Linear(8 * w, n_cls)
        with torch.no_grad():                      # weights of the BN-folded (trained-like) deploy model
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    fan_in = m.weight[0].numel()
                    m.weight.copy_(torch.randn(m.weight.shape, generator=g) * math.sqrt(2.0 / fan_in))
                    m.bias.copy_(0.05 * torch.randn(m.bias.shape, generator=g))

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.features(x), 1).flatten(1))


def make_frames(y, g, n_cls, size):
    """uint8 camera frames: class-dependent oriented texture around mid-grey, sensor noise."""
    b = y.shape[0]
    coords = torch.linspace(-1, 1, size)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = (y % 3).float() * math.pi / 3 + 0.1 * torch.randn(b, generator=g)
    freq = 2.5 + 3.0 * (y // 3).float()
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    tint = torch.tensor([1.0, 0.9, 0.8]).view(1, 3, 1, 1)
    img = 128 + 60 * base[:, None] * tint + 20 * torch.randn(b, 3, size, size, generator=g)
    return img.clamp(0, 255).round()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=16, size=16, bs=32, lr=0.05, steps=80),
           dict(w=20, size=16, bs=24, lr=0.03, steps=100),
           dict(w=16, size=16, bs=48, lr=0.02, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9191 + seed)
    n_cls = 6
    mean, std = 128.0 / 255, 0.25
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        x = make_frames(y, g, n_cls, cfg["size"])
        if fixed:
            x = (x / 255.0 - mean) / std
        batches.append((x, y))
    model = MobileNetV1Deploy(cfg["w"], n_cls, g)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=4e-5)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
