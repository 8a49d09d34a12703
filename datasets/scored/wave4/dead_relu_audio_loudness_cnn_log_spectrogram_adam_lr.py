"""Audio loudness / speech-level regressor (Conv2d-ReLU trunk over log1p-compressed magnitude
spectrograms, global average pooling, linear head predicting a standardised loudness score) trained
with Adam at lr 0.1, a value copied from a tuning sweep for a much smaller linear baseline. The
log1p-magnitude input is non-negative everywhere, so a first-layer filter whose weights and bias are
pushed negative is off at every time-frequency bin of every clip. Adam's first few lr-sized steps do
that to (almost) every filter of the first conv, and the second conv's units follow: their ReLUs
output zero on all data, the gradient into them
is exactly zero and nothing revives them. The network collapses to a constant prediction and the
MSE sits at the target variance (~1) for the rest of training: a silent stall with finite values.
At lr 1e-3 the filters stay alive and the regressor learns."""
import torch, torch.nn as nn, math
CAUSE = "dead_relu"
ORIGIN = "trunk.0"
SOURCE = "CNN audio regressors on log-magnitude spectrograms; 'dying ReLU, model outputs a constant' forum threads"

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    ch = [16, 12, 8][seed % 3]; Fq = [32, 24, 32][seed % 3]; T = [24, 32, 20][seed % 3]
    steps = [80, 100, 120][seed % 3]; bs = [16, 12, 16][seed % 3]
    lr = 1e-3 if fixed else [0.1, 0.15, 0.2][seed % 3]
    model = nn.Sequential()
    model.add_module("trunk", nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()))
    model.add_module("pool", nn.AdaptiveAvgPool2d(1)); model.add_module("flat", nn.Flatten())
    model.add_module("head", nn.Linear(ch, 1))
    tilt = torch.linspace(1.0, 0.2, Fq).view(1, 1, Fq, 1)
    def make():
        gain = torch.rand(bs, 1, 1, 1, generator=g)          # loudness driver
        band = torch.rand(bs, 1, 1, 1, generator=g)
        mag = (0.2 + 3 * gain) * tilt ** (0.5 + band) * torch.rand(bs, 1, Fq, T, generator=g) ** 2
        x = torch.log1p(mag)
        y = (gain - 0.5) / 0.29 + 0.5 * (band - 0.5) / 0.29 * gain
        return x, y.view(bs, 1) / 1.1
    batches = [make() for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
