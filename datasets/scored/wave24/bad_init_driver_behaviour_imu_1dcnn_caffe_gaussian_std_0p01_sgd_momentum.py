"""Driver-behaviour classifier on smartphone/telematics IMU windows (3-axis accelerometer +
3-axis gyro, 128 samples at 50 Hz): a plain (no BN, no residual) 1-D CNN stack -> global
average pool -> 3 classes {normal, aggressive (harsh brake/accelerate jerks), weaving/drowsy
(low-frequency lateral oscillation)}; cross-entropy, SGD with momentum. The training set is
class-balanced (the practitioner down-sampled 'normal' trips), so chance loss is ln 3.

Mechanism: all Conv1d/Linear weights use the Caffe ``gaussian`` filler with std 0.01 (the
AlexNet-era default copied into the model). With fan-in C*k = 120-320 each conv layer
multiplies the activation scale by 0.01*sqrt(fan_in/2) ~ 0.08-0.13, so after 6-8 layers the
pooled features are ~1e-7 of the input scale; the logits are ~constant, every gradient below
the head is scaled by the same vanishing product, and the loss sits at ln 3 for the whole run.

ORIGIN = "features.0": the shrinkage is geometric from the first conv on (its output is
already ~0.1x the input scale) and every later layer compounds it.

Fix: Kaiming-normal init (fan_in, ReLU gain) for the convs, xavier for the head. Same model,
data, optimiser and lr.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Caffe gaussian weight_filler std 0.01 (AlexNet prototxt) reused in deep plain nets; "
          "He et al. 2015 Sec. 2.2 / Simonyan & Zisserman 2014 report deep plain nets with "
          "N(0,0.01) init failing to converge; smartphone driver-behaviour HAR-style CNNs")


def _windows(g, n, T=128):
    t = torch.arange(T).float() / 50.0
    y = torch.randint(0, 3, (n,), generator=g)
    x = 0.3 * torch.randn(n, 6, T, generator=g)
    x[:, 2] += 1.0  # gravity on z
    # aggressive: sharp longitudinal jerks on acc-x plus gyro-z yaw bursts
    for i in torch.nonzero(y == 1).flatten().tolist():
        for _ in range(3):
            c = int(torch.randint(5, T - 5, (1,), generator=g))
            amp = 1.5 + torch.rand(1, generator=g).item()
            x[i, 0, c - 3:c + 3] += amp * (1 if torch.rand(1, generator=g).item() > 0.5 else -1)
            x[i, 5, c - 2:c + 2] += 0.8 * amp
    # weaving: slow lateral oscillation on acc-y and gyro-z
    idx = torch.nonzero(y == 2).flatten()
    if len(idx):
        f = 0.3 + 0.4 * torch.rand(len(idx), 1, generator=g)
        ph = 6.28 * torch.rand(len(idx), 1, generator=g)
        s = torch.sin(6.2832 * f * t.unsqueeze(0) + ph)
        x[idx, 1] += 1.2 * s
        x[idx, 5] += 0.6 * torch.cos(6.2832 * f * t.unsqueeze(0) + ph)
    return x, y


class DriverCNN(nn.Module):
    def __init__(self, depth, ch, k=5):
        super().__init__()
        layers, c = [], 6
        for i in range(depth):
            layers += [nn.Conv1d(c, ch, k, padding=k // 2, stride=2 if i in (1, 3) else 1), nn.ReLU()]
            c = ch
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(ch, 3)

    def forward(self, x):
        return self.head(self.features(x).mean(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(2000 + seed)
    depth = [6, 7, 8][seed % 3]
    ch = [24, 32, 64][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    steps = 120
    torch.manual_seed(seed)
    model = DriverCNN(depth, ch)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                if isinstance(m, nn.Linear):
                    nn.init.xavier_normal_(m.weight)
                else:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)   # caffe gaussian filler
            nn.init.zeros_(m.bias)
    x, y = _windows(g, steps * bs)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
