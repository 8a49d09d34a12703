"""InceptionTime (Ismail Fawaz et al. 2020) human-activity classifier on 6-axis IMU
windows (accelerometer + gyroscope), trained with Adam.

Data bug: the wearable streams over Bluetooth LE; when packets are dropped the
preprocessing script re-indexes the stream onto a regular 50 Hz grid with pandas
(`df.reindex(grid)`), which fills the gaps with NaN, and nothing downstream drops or
interpolates them.  The recordings with a connection drop end up in one shuffled batch
mid-run (a handful of windows with a run of NaN samples on every channel).  One NaN
sample propagates through the first inception convolutions, the batch-norm statistics
and the pooled logits, so that step's cross entropy is NaN and the Adam update writes
NaN into every weight.

ORIGIN: None -- the corruption is in the data; no module misbehaves on finite input.

Fix: drop the windows that contain NaN samples (the corrupt rows are filtered out of that
batch; every other batch is identical).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("InceptionTime (Ismail Fawaz et al., 2020) for time-series classification; "
          "common HAR pipelines that reindex BLE/IMU streams onto a fixed grid and get NaN "
          "for dropped packets ('loss becomes nan after N iterations' reports)")


class InceptionModule(nn.Module):
    def __init__(self, cin, nf, kernels, bottleneck=16):
        super().__init__()
        self.bottleneck = nn.Conv1d(cin, bottleneck, 1, bias=False) if cin > 1 else nn.Identity()
        bc = bottleneck if cin > 1 else cin
        self.convs = nn.ModuleList(nn.Conv1d(bc, nf, k, padding=k // 2, bias=False) for k in kernels)
        self.pool_conv = nn.Conv1d(cin, nf, 1, bias=False)
        self.bn = nn.BatchNorm1d(nf * (len(kernels) + 1))
        self.act = nn.ReLU()

    def forward(self, x):
        b = self.bottleneck(x)
        outs = [c(b) for c in self.convs]
        outs.append(self.pool_conv(F.max_pool1d(x, 3, 1, 1)))
        return self.act(self.bn(torch.cat(outs, 1)))


class InceptionTime(nn.Module):
    def __init__(self, cin, n_classes, nf, depth, kernels):
        super().__init__()
        self.blocks = nn.ModuleList()
        self.shortcuts = nn.ModuleList()
        c = cin
        res_c = cin
        for d in range(depth):
            self.blocks.append(InceptionModule(c, nf, kernels))
            c = nf * (len(kernels) + 1)
            if d % 3 == 2:
                self.shortcuts.append(nn.Sequential(nn.Conv1d(res_c, c, 1, bias=False), nn.BatchNorm1d(c)))
                res_c = c
        self.fc = nn.Linear(c, n_classes)

    def forward(self, x):
        res = x
        s = 0
        for d, blk in enumerate(self.blocks):
            x = blk(x)
            if d % 3 == 2:
                x = F.relu(x + self.shortcuts[s](res))
                res = x
                s += 1
        return self.fc(x.mean(-1))


def _windows(g, n, T, n_classes):
    t = torch.arange(T) / 50.0
    y = torch.randint(0, n_classes, (n,), generator=g)
    freq = 0.6 + 0.5 * y.float()                       # cadence per activity
    amp = 0.3 + 0.25 * (y % 3).float()
    phase = 2 * math.pi * torch.rand(n, 1, generator=g)
    base = torch.sin(2 * math.pi * freq[:, None] * t + phase)
    chans = []
    for c in range(6):
        mix = torch.sin(torch.tensor(1.3 * c + 0.7)) * base + 0.3 * torch.cos(2 * base + c)
        chans.append(amp[:, None] * mix + 0.35 * torch.randn(n, T, generator=g))
    x = torch.stack(chans, 1)
    x[:, 2] += 1.0  # gravity on the z accelerometer axis (already in g units)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(nf=8, depth=3, kernels=(9, 19, 39), bs=32, T=96, steps=60, bad_step=31, n_bad=3),
           dict(nf=6, depth=6, kernels=(5, 11, 21), bs=24, T=80, steps=60, bad_step=44, n_bad=2),
           dict(nf=8, depth=3, kernels=(7, 15, 31), bs=16, T=128, steps=70, bad_step=18, n_bad=4)][seed % 3]
    n_classes = 6
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    model = InceptionTime(6, n_classes, cfg["nf"], cfg["depth"], cfg["kernels"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = []
    for step in range(cfg["steps"]):
        x, y = _windows(g, cfg["bs"], cfg["T"], n_classes)
        if step == cfg["bad_step"]:
            rows = torch.randperm(cfg["bs"], generator=g)[:cfg["n_bad"]]
            start = int(torch.randint(0, cfg["T"] - 20, (1,), generator=g))
            x[rows, :, start:start + 12] = float("nan")  # dropped BLE packets -> reindex NaN
            if fixed:
                keep = ~torch.isnan(x).flatten(1).any(1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
