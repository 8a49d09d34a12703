"""Air-writing letter recognition from a smartwatch IMU (3-axis accel + 3-axis gyro) with a
small dilated temporal convolutional network (TCN), no normalisation layers.

Mechanism: an `init_weights` helper written for the model calls
`nn.init.normal_(m.weight)` on every Conv1d/Linear - i.e. mean 0, std 1, with no 1/sqrt(fan_in)
scaling. Each conv has fan_in = channels*kernel ~ 100-300, so every layer multiplies the
activation scale by ~sqrt(fan_in/2) ~ 8-12. After 4-5 conv layers and the head the logits are
~1e4-1e6 from the very first forward pass; the cross-entropy is enormous, the weight gradients
scale with the exploded activations and the first SGD steps push the weights to inf/NaN.

ORIGIN: "tcn.0", the first Conv1d: the geometric growth starts there (every layer is initialised
the same way, the first is where the scale first jumps).

Fix: Kaiming-normal (fan_in, ReLU gain) initialisation for the convs and the head.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "tcn.0"
SOURCE = ("nn.init.normal_(m.weight) with default std=1 in a custom weights_init helper "
          "(common PyTorch forum / GitHub issue pattern); activation explosion with depth "
          "without fan-in scaling (He et al. 2015); TCN of Bai et al. 2018 for IMU gestures")


class AirWritingTCN(nn.Module):
    def __init__(self, ch, n_layers, n_cls, k=5):
        super().__init__()
        layers, c_in = [], 6
        for i in range(n_layers):
            d = 2 ** i
            layers += [nn.Conv1d(c_in, ch, k, dilation=d, padding=d * (k - 1) // 2), nn.ReLU()]
            c_in = ch
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Linear(ch, n_cls)

    def forward(self, x):
        h = self.tcn(x)
        return self.head(h.mean(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ch = [32, 48, 40][seed % 3]
    n_layers = [4, 5, 4][seed % 3]
    lr = [0.02, 0.01, 0.03][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 120
    n_cls, T = 12, 64
    model = AirWritingTCN(ch, n_layers, n_cls)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)
            nn.init.zeros_(m.bias)
    # synthetic strokes: each letter is a class-specific smooth 6-channel trajectory template
    t = torch.linspace(0, 1, T)
    freqs = torch.rand(n_cls, 6, 2, generator=g) * 4 + 0.5
    phase = torch.rand(n_cls, 6, 2, generator=g) * 6.28
    templ = (torch.sin(2 * 3.1416 * freqs[..., :1] * t + phase[..., :1]) +
             0.5 * torch.sin(2 * 3.1416 * freqs[..., 1:] * t + phase[..., 1:]))
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        amp = 0.7 + 0.6 * torch.rand(bs, 1, 1, generator=g)
        x = amp * templ[y] + 0.3 * torch.randn(bs, 6, T, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
