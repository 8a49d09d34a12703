"""X3D-style video regressor (channel-wise separable 3-D convs: 1x1x1 expand, 3x3x3
depthwise, squeeze-excite, swish, 1x1x1 project, BatchNorm everywhere, residual) trained
to regress left-ventricular ejection fraction from echocardiogram clips, EchoNet-Dynamic
style. Targets are standardised, (EF - 55) / 10, by the dataset code.

The corruption: one site's export of FileList.csv leaves the EF cell empty for studies
whose tracing was never completed; pandas reads the empty cell as NaN and the Dataset
does `torch.tensor(row.EF, dtype=torch.float32)` without a check, so one mid-run batch
carries a few NaN targets. The MSE of that batch is NaN, its backward pass writes NaN
into every gradient and the SGD step turns every weight into NaN: the run is dead from
that step on, after a perfectly healthy start.

ORIGIN: None -- a corrupt batch, not a module, is the root cause.

Fix: the rows with a missing EF are dropped from that batch (dropna on the file list);
every other step, the model, the optimiser and the lr are identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Ouyang et al. 2020 EchoNet-Dynamic (video EF regression, FileList.csv); "
          "Feichtenhofer 2020 X3D; empty CSV cells read by pandas as NaN reaching a "
          "regression target (a batch of NaN labels mid-epoch, loss NaN from that step).")


class X3DBlock(nn.Module):
    def __init__(self, c, expand, se=True):
        super().__init__()
        e = c * expand
        self.a = nn.Sequential(nn.Conv3d(c, e, 1, bias=False), nn.BatchNorm3d(e), nn.ReLU(inplace=True))
        self.b = nn.Sequential(nn.Conv3d(e, e, 3, padding=1, groups=e, bias=False), nn.BatchNorm3d(e))
        self.se = nn.Sequential(nn.AdaptiveAvgPool3d(1), nn.Conv3d(e, max(4, e // 4), 1),
                                nn.ReLU(inplace=True), nn.Conv3d(max(4, e // 4), e, 1),
                                nn.Sigmoid()) if se else None
        self.act = nn.SiLU()
        self.c = nn.Sequential(nn.Conv3d(e, c, 1, bias=False), nn.BatchNorm3d(c))

    def forward(self, x):
        h = self.b(self.a(x))
        if self.se is not None:
            h = h * self.se(h)
        return F.relu(x + self.c(self.act(h)))


class X3D(nn.Module):
    def __init__(self, width, depth, expand):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv3d(1, width, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), bias=False),
                                  nn.Conv3d(width, width, (5, 1, 1), padding=(2, 0, 0), groups=width, bias=False),
                                  nn.BatchNorm3d(width), nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(*[X3DBlock(width, expand, se=(i % 2 == 0)) for i in range(depth)])
        self.head = nn.Sequential(nn.Conv3d(width, 4 * width, 1, bias=False), nn.BatchNorm3d(4 * width),
                                  nn.ReLU(inplace=True), nn.AdaptiveAvgPool3d(1), nn.Flatten(),
                                  nn.Linear(4 * width, 1))

    def forward(self, clip):
        return self.head(self.blocks(self.stem(clip))).squeeze(1)


def make_batches(g, steps, bs, T, S, bad_step, n_bad, fixed):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, S), torch.linspace(-1, 1, S), indexing="ij")
    r = (yy ** 2 + xx ** 2).sqrt()
    out = []
    for i in range(steps):
        ef = 55 + 10 * torch.randn(bs, generator=g)           # percent
        edv = 0.55 + 0.1 * torch.rand(bs, generator=g)       # end-diastolic radius
        esv = edv * (1 - ef / 100.0).clamp(0.2, 0.9) ** 0.5  # end-systolic radius
        phase = 2 * torch.pi * torch.rand(bs, generator=g)
        t = torch.arange(T).float()
        rad = esv[:, None] + (edv - esv)[:, None] * 0.5 * (1 + torch.cos(2 * torch.pi * t[None] / T + phase[:, None]))
        clip = torch.sigmoid((r[None, None] - rad[:, :, None, None]) * 20)  # bright wall, dark cavity
        clip = clip + 0.15 * torch.randn(clip.shape, generator=g)
        clip = ((clip - 0.5) / 0.3)[:, None]                  # (B, 1, T, S, S)
        if i == bad_step:
            ef[:n_bad] = float("nan")                         # empty EF cells from one site's export
            if fixed:                                         # dropna on the file list
                keep = ~torch.isnan(ef)
                clip, ef = clip[keep], ef[keep]
        out.append((clip, (ef - 55.0) / 10.0))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [8, 12, 8][seed % 3]
    depth = [2, 2, 3][seed % 3]
    bs = [16, 12, 16][seed % 3]
    lr = [0.01, 0.02, 0.01][seed % 3]
    steps = [120, 110, 100][seed % 3]
    bad_step = [60, 75, 40][seed % 3]
    n_bad = [2, 1, 3][seed % 3]
    model = X3D(width, depth, expand=3)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-5)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(),
                batches=make_batches(g, steps, bs, 8, 16, bad_step, n_bad, fixed), steps=steps)
