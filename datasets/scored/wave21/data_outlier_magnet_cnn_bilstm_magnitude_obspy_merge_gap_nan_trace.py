"""MagNet-style CNN + BiLSTM earthquake magnitude regressor (Mousavi & Beroza 2020) hit by one batch with a NaN data gap.

Mechanism: waveforms are cut from continuous data; for one day the station had a telemetry gap
and `Stream.merge(fill_value=None)` left a masked array that was written out with `.filled(np.nan)`.
The normalisation (divide by max |amplitude|) keeps the NaNs, so one batch somewhere mid-run
contains NaN samples: the forward produces a NaN loss at that step and the NaN gradients poison
all weights (Adam moments become NaN), so every later loss is NaN too.

ORIGIN: None (a corrupt input batch, not a module).
Fix: that batch replaced by clean waveforms (the gap-filled traces dropped / merged with fill_value=0
and interpolated), everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "MagNet (Mousavi & Beroza 2020, GRL) CNN-BiLSTM magnitude estimation; ObsPy Stream.merge leaves masked gaps that become NaN when filled"


class MagNet(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(3, c, 5, padding=2), nn.Dropout(0.0), nn.MaxPool1d(4),
            nn.Conv1d(c, c, 5, padding=2), nn.Dropout(0.0), nn.MaxPool1d(4),
        )
        self.lstm = nn.LSTM(c, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, 1)

    def forward(self, x):
        h = self.conv(x).transpose(1, 2)
        o, _ = self.lstm(h)
        return self.head(o[:, -1]).squeeze(-1)


def _events(g, b, T):
    mag = 1.0 + 3.0 * torch.rand(b, generator=g)
    t = torch.arange(T).float()
    onset = torch.randint(T // 8, T // 3, (b, 1), generator=g).float()
    dur = 10 + 20 * mag[:, None]
    env = (t >= onset) * torch.exp(-(t - onset).clamp(min=0) / dur)
    x = torch.randn(b, 3, T, generator=g) * (0.05 + env[:, None] * (10 ** (mag[:, None, None] - 2.5)))
    x = x / x.abs().amax(dim=(1, 2), keepdim=True)
    # keep a log-amplitude channel hint like MagNet's amplitude-preserving input
    x[:, 2] = x[:, 2] * 0 + torch.log10(10 ** (mag[:, None] - 2.5) + 0.05) * env
    return x, mag


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 12][seed % 3]
    hidden = [16, 12, 20][seed % 3]
    T = [256, 192, 320][seed % 3]
    bs = [16, 12, 16][seed % 3]
    steps = [60, 50, 70][seed % 3]
    bad_step = [33, 21, 48][seed % 3]
    batches = [_events(g, bs, T) for _ in range(steps)]
    if not fixed:
        x, y = batches[bad_step]
        x = x.clone()
        gap0 = T // 2 + 7 * seed
        x[: bs // 3, :, gap0:gap0 + T // 6] = float("nan")  # telemetry gap left as NaN
        batches[bad_step] = (x, y)
    model = MagNet(c, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
