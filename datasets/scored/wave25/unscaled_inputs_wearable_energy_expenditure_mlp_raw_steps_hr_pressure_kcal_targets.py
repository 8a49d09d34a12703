"""Energy-expenditure (calorie) estimation for a fitness band: an MLP regressing kcal per 10-min
window from per-window wearable and profile features - step count, mean heart rate (bpm),
body mass (kg), height (cm), age (years), barometric pressure (hPa, for stairs/altitude) and
vector-magnitude activity counts - trained with momentum SGD on MSE.

Mechanism: the features go into the network in their raw units (steps 0-1500, counts up to
~2e4, pressure ~950-1030 hPa, height ~150-200 cm) and the target is raw kcal (~10-150). The
first Linear's pre-activations are in the thousands, the initial prediction error is ~1e2 and
the MSE ~1e4-1e6 from step 0; the weight gradients of the first layer scale with the input
magnitudes (1e3-1e4), so the very first SGD steps overshoot by orders of magnitude and the loss
goes to inf/NaN within a few steps.

ORIGIN: "net.0", the first Linear, which receives the unscaled features.

Fix: standardise every input feature and the target with training-set statistics (z-scores;
the loss is then in target-standard-deviation units); same model, lr and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("wearable energy-expenditure regression from raw step counts / HR / profile "
          "(Fitbit/ActiGraph-style features) without feature or target scaling; the standard "
          "'normalise your inputs' failure (LeCun et al. 1998 'Efficient BackProp')")


def _sample(n, g):
    steps = torch.rand(n, generator=g) * 1500
    hr = 60 + steps / 1500 * 90 + 10 * torch.randn(n, generator=g)
    mass = 50 + 60 * torch.rand(n, generator=g)
    height = 150 + 50 * torch.rand(n, generator=g)
    age = 18 + 60 * torch.rand(n, generator=g)
    pressure = 950 + 80 * torch.rand(n, generator=g)
    counts = steps * 12 + 800 * torch.rand(n, generator=g)
    x = torch.stack([steps, hr, mass, height, age, pressure, counts], 1)
    # kcal per 10 min: resting metabolism + activity term (Keytel-style HR relation)
    rest = (10 * mass + 6.25 * height - 5 * age) / 144.0
    act = 0.0006 * counts * mass / 70 + 0.08 * (hr - 60) * mass / 70
    y = rest + act + 2.0 * torch.randn(n, generator=g)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 48, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 150
    layers, d = [], 7
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))

    class EENet(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(*layers)

        def forward(self, x):
            return self.net(x).squeeze(-1)

    model = EENet()
    x_ref, y_ref = _sample(4096, g)
    mu, sd = x_ref.mean(0), x_ref.std(0)
    ymu, ysd = y_ref.mean(), y_ref.std()
    batches = []
    for _ in range(steps):
        x, y = _sample(bs, g)
        if fixed:
            x, y = (x - mu) / sd, (y - ymu) / ysd
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps)
