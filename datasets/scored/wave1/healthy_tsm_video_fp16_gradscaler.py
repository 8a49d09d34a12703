"""Healthy run: a Temporal Shift Module video classifier (Lin et al. 2019: a 2D CNN applied to every
frame, with 1/4 of the channels shifted one frame forward / backward in time before each residual
conv block, then temporal average of per-frame logits) recognising the drift direction of a moving
grating, trained with fp16 autocast AND a properly used GradScaler (init_scale 2**16). Things that
look alarming but are normal: the forward runs in float16, the GradScaler multiplies the loss by
65536 so the raw gradients flowing through the graph are huge, and whenever the scaled gradients
overflow (they contain inf) the scaler silently skips that optimizer step and halves its scale --
on most seeds this happens a couple of times mid-run (65536 -> 16384), which is expected. The
unscaled updates are sane and the loss falls steadily. fixed=True returns the same run.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Lin, Gan & Han 2019 'TSM: Temporal Shift Module'; PyTorch AMP docs (GradScaler skips steps "
          'whose gradients contain inf/NaN and lowers the scale)')

T, S, K = 6, 12, 4


def temporal_shift(x, t, fold_div=4):
    bt, c, h, w = x.shape
    x = x.view(bt // t, t, c, h, w)
    fold = c // fold_div
    out = torch.zeros_like(x)
    out[:, :-1, :fold] = x[:, 1:, :fold]                     # shift left (future -> now)
    out[:, 1:, fold:2 * fold] = x[:, :-1, fold:2 * fold]     # shift right (past -> now)
    out[:, :, 2 * fold:] = x[:, :, 2 * fold:]
    return out.view(bt, c, h, w)


class ShiftBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        h = torch.relu(self.conv1(temporal_shift(x, T)))
        return torch.relu(x + self.conv2(h))


class TSMNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 16, 3, stride=2, padding=1)
        self.block1 = ShiftBlock(16)
        self.block2 = ShiftBlock(16)
        self.fc = nn.Linear(16, K)

    def forward(self, clip):                                  # (B, T, 1, H, W)
        b = clip.shape[0]
        x = torch.relu(self.stem(clip.flatten(0, 1)))
        x = self.block2(self.block1(x))
        logits = self.fc(x.mean(dim=(2, 3))).view(b, T, K)
        return logits.mean(1)


def _make_batch(g, n):
    y = torch.randint(0, K, (n,), generator=g)
    ii = torch.arange(S).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    clips = torch.zeros(n, T, 1, S, S)
    for i in range(n):
        kx, ky = [(0.8, 0.0), (-0.8, 0.0), (0.0, 0.8), (0.0, -0.8)][int(y[i])]
        ph = float(torch.rand(1, generator=g)) * 6.28
        for t in range(T):                       # grating drifting in one of 4 directions
            clips[i, t, 0] = torch.cos(kx * xx + ky * yy - 1.2 * t + ph)
    return clips + 0.3 * torch.randn(clips.shape, generator=g), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 8) for _ in range(10)]
    model = TSMNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    steps = 80
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=scaler)
