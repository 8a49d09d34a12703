"""DeepAnT (Munir et al. 2019) time-series anomaly detector: a small 1-D CNN forecaster
that predicts the next reading of a multivariate sensor stream from a sliding window;
the anomaly score is later the forecast error.  Trained with momentum SGD and the
MSE forecasting loss used by most PyTorch ports, on windows standardised with statistics computed on clean data.

Data bug: the plant historian writes -9999 for readings the logger could not acquire
(a documented sentinel), and the export script does not mask it.  One batch mid-run
contains windows where a sensor outage was exported as -9999, i.e. hundreds to
thousands of standard deviations after standardisation, in both the input window and
the next-step target.  That batch's squared error is ~1e5-1e6 times the normal one and
its gradient (amplified again by the 1000x input of the first convolution) makes
momentum SGD take an enormous step; the activations and the loss blow up to inf/NaN
within a few steps.

ORIGIN: None -- the corruption is in the data (the sentinel rows), not a module.

Fix: mask the sentinel -- the windows containing -9999 are filtered out of that batch.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("DeepAnT (Munir, Siddiqui, Dengel, Ahmed; IEEE Access 2019) CNN forecaster for "
          "unsupervised anomaly detection (MSE as in most PyTorch ports); -9999 missing-value sentinels in SCADA/historian "
          "and weather-station exports left unmasked")


class DeepAnT(nn.Module):
    def __init__(self, n_sensors, window, ch, hidden):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(n_sensors, ch, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(ch, ch, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(ch * (window // 4), hidden), nn.ReLU(),
                                  nn.Linear(hidden, n_sensors))

    def forward(self, x):
        return self.head(self.features(x))


def _stream(g, n_sensors, length):
    t = torch.arange(length, dtype=torch.float32)
    series = []
    for s in range(n_sensors):
        period = 24 + 12 * s
        level = 50 + 20 * s
        amp = 8 + 3 * s
        x = level + amp * torch.sin(2 * math.pi * t / period + s) \
            + 0.4 * amp * torch.sin(2 * math.pi * t / (period / 3.1)) \
            + 0.6 * torch.randn(length, generator=g)
        series.append(x)
    return torch.stack(series, 0)  # (S, L) in engineering units


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(S=4, W=32, ch=32, hidden=40, bs=32, lr=0.02, steps=120, bad=60, n_bad=2),
           dict(S=3, W=48, ch=24, hidden=32, bs=24, lr=0.02, steps=110, bad=40, n_bad=3),
           dict(S=5, W=24, ch=32, hidden=48, bs=48, lr=0.02, steps=130, bad=85, n_bad=2)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(99 + seed)
    S, W = cfg["S"], cfg["W"]
    raw = _stream(g, S, 6000)
    mu, sd = raw.mean(1, keepdim=True), raw.std(1, keepdim=True)  # clean-period statistics
    model = DeepAnT(S, W, cfg["ch"], cfg["hidden"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = []
    for step in range(cfg["steps"]):
        starts = torch.randint(0, raw.shape[1] - W - 1, (cfg["bs"],), generator=g)
        win = torch.stack([raw[:, s:s + W + 1] for s in starts.tolist()], 0).clone()
        if step == cfg["bad"]:
            rows = torch.randperm(cfg["bs"], generator=g)[:cfg["n_bad"]]
            sensor = int(torch.randint(0, S, (1,), generator=g))
            a = int(torch.randint(0, W - 8, (1,), generator=g))
            win[rows, sensor, a:] = -9999.0  # logger outage sentinel
            if fixed:
                keep = ~(win == -9999.0).flatten(1).any(1)
                win = win[keep]
        win = (win - mu) / sd
        batches.append((win[:, :, :W], win[:, :, W]))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=cfg["steps"])
