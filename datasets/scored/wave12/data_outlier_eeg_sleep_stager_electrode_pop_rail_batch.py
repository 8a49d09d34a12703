"""Small 1-D CNN sleep stager on two-channel EEG epochs (classes differ by their dominant rhythm:
delta, theta, alpha, spindle band), inputs scaled by a fixed 50 uV so clean epochs are O(1). One
recording in the shuffled stream contains an electrode 'pop': the contact lifts, the ADS1299
front end slams to its +-187.5 mV rail and stays there for most of the epoch. Those rows are
~3750 in normalised units, three orders of magnitude above everything else. The single batch
that contains them (step 100) produces a gradient on the first conv thousands of times larger
than usual; SGD with momentum takes that step and keeps coasting on it: the loss spikes to
1e5-1e8 for a couple of steps, the first conv's weights are blown up (activations of 1e2-1e9),
every ReLU of the second conv is knocked dead, and the run then sits flat at chance level (ln 4)
for the rest of training without ever producing a NaN. The fixed run drops the rail-saturated
rows (|x| above a physiological 1 mV) from that batch, the standard artefact-rejection step."""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "features.0"
SOURCE = ("Sleep-EDF / OpenBCI style EEG pipelines: electrode pop artefacts saturating the ADC "
          "rail; common 'loss suddenly explodes mid-epoch' reports traced to one unclean "
          "recording, fixed by amplitude-threshold artefact rejection")

FS, N, SCALE_UV, RAIL_UV = 100, 256, 50.0, 187500.0
BANDS = [2.0, 6.0, 10.0, 13.5]


def make_batch(g, n):
    y = torch.randint(0, 4, (n,), generator=g)
    t = torch.arange(N, dtype=torch.float32) / FS
    f = torch.tensor(BANDS)[y].unsqueeze(1) * (1 + 0.08 * torch.randn(n, 1, generator=g))
    ph = 2 * math.pi * torch.rand(n, 2, 1, generator=g)
    amp_uv = 30 + 20 * torch.rand(n, 2, 1, generator=g)
    sig = amp_uv * torch.sin(2 * math.pi * f.unsqueeze(1) * t + ph)
    bg = torch.cumsum(torch.randn(n, 2, N, generator=g), -1)  # 1/f-ish drift
    bg = bg - bg.mean(-1, keepdim=True)
    x_uv = sig + 3.0 * bg + 15.0 * torch.randn(n, 2, N, generator=g)
    return x_uv, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = nn.Sequential()
    model.add_module("features", nn.Sequential(
        nn.Conv1d(2, 16, 9, stride=2, padding=4), nn.ReLU(),
        nn.Conv1d(16, 32, 9, stride=2, padding=4), nn.ReLU(),
        nn.Conv1d(32, 32, 9, stride=2, padding=4), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten()))
    model.add_module("head", nn.Linear(32, 4))
    steps, bad_step = 160, 100
    raw = [make_batch(g, 32) for _ in range(steps)]
    # electrode pop in one recording: channel 1 of 6 rows jumps to the ADC rail
    x_uv, y = raw[bad_step]
    x_uv = x_uv.clone()
    onset = 40
    x_uv[3:9, 1, onset:] = RAIL_UV
    raw[bad_step] = (x_uv, y)
    batches = []
    for x_uv, y in raw:
        if fixed:
            keep = x_uv.abs().amax(dim=(1, 2)) < 1000.0   # artefact rejection: > 1 mV is not EEG
            x_uv, y = x_uv[keep], y[keep]
        batches.append((x_uv / SCALE_UV, y))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
