"""ShallowFBCSPNet-style EEG decoder (Schirrmeister et al. 2017, the braindecode model with
batch_norm=False: temporal Conv2d -> spatial Conv2d across electrodes -> square -> average pool ->
safe_log = log(clamp(x, 1e-6)) -> zero-initialised linear classifier) trained on
motor-imagery-like trials exported with MNE, whose get_data() returns VOLTS: the signals are ~1e-5
and their band power ~1e-10. Braindecode's tutorials multiply by 1e6 (microvolts) and standardise
for exactly this reason; this script skips that step. The signal part of every pre-activation is
~1e-6 of the conv biases, so after squaring and pooling every trial gives the same feature vector
(bias^2), the class information is buried 5-6 orders of magnitude below it, and the gradient that
would have to grow the conv weights by ~1e5 is equally tiny: the loss stays at log(4) the whole
run. The fixed run standardises each channel (z-score with the training-set mean and std) -- the
only change.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "conv_time"
SOURCE = ('braindecode ShallowFBCSPNet and its tutorials (data converted from V to uV and '
          'standardised); MNE Epochs.get_data() returns volts; Schirrmeister et al. 2017')

C, T, K, FS = 8, 250, 4, 250.0


class ShallowNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_time = nn.Conv2d(1, 16, (1, 13))
        self.conv_spat = nn.Conv2d(16, 16, (C, 1))
        self.pool = nn.AvgPool2d((1, 35), stride=(1, 7))
        self.classifier = nn.Linear(16 * 30, K)
        nn.init.zeros_(self.classifier.weight)       # zero-initialised head (timm-style fine-tuning habit)
        nn.init.zeros_(self.classifier.bias)

    def forward(self, x):                            # x: (B, 1, C, T)
        h = self.conv_spat(self.conv_time(x))
        h = self.pool(h * h)
        h = torch.log(torch.clamp(h, min=1e-6))
        return self.classifier(h.flatten(1))


def _trials(g, n):
    y = torch.randint(0, K, (n,), generator=g)
    t = torch.arange(T).float() / FS
    x = torch.zeros(n, C, T)
    for i in range(n):
        bg = torch.cumsum(torch.randn(C, T, generator=g), 1) * 0.4        # slow 1/f-like drift
        bg = bg - bg.mean(1, keepdim=True)
        ph = torch.rand(C, 1, generator=g) * 6.28
        amp = torch.full((C, 1), 0.5)
        amp[2 * int(y[i]):2 * int(y[i]) + 2] = 2.0                         # class-specific mu rhythm
        x[i] = bg + amp * torch.sin(2 * math.pi * 10.0 * t[None] + ph) + 0.5 * torch.randn(C, T, generator=g)
    return x * 1e-5, y                                                    # in volts (~10 uV)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    data = [_trials(g, 16) for _ in range(10)]
    if fixed:
        allx = torch.cat([x for x, _ in data])
        mu, sd = allx.mean(dim=(0, 2), keepdim=True), allx.std(dim=(0, 2), keepdim=True)
        data = [((x - mu) / sd, y) for x, y in data]
    batches = [(x[:, None], y) for x, y in data]
    model = ShallowNet()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    steps = 120
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
