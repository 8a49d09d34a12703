"""Heart-rate regressor built on a learnable Pan-Tompkins front end: a Conv1d initialised to the
classic five-point derivative kernel in physical units (mV/s, i.e. scaled by fs/8), squaring, a
150 ms moving-window-integration conv, then the autocorrelation of that QRS-energy envelope over
lags 0..1.5 s computed with one bmm, normalised by its lag-0 value and fed to a small MLP that
predicts the rate. In fp32 everything is fine: the normalised autocorrelation is scale free. The
run uses CPU autocast with float16 to save time. Conv and bmm run in half; the QRS slope is ~50
mV/s, so the squared/integrated envelope peaks in the hundreds (mean ~90) and the lag products
summed over ~2.5 s of samples are ~1e6, far beyond fp16's 65504: r(0) and ~96% of the r(k) come
out of the bmm as +inf, r(k)/r(0) is inf/inf = NaN and the loss is NaN from the first step (a
GradScaler would not help, the overflow is in the forward pass). The fixed run uses bfloat16
autocast (fp32 exponent range) and nothing else."""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "autocorr"
SOURCE = ("Pan & Tompkins 1985 QRS detector (derivative, squaring, moving-window integration); "
          "fp16 autocast overflow in energy/autocorrelation features, cf. PyTorch AMP docs on "
          "ops that overflow in float16 and 'loss is NaN with autocast' forum threads")

FS, SECS = 125, 4
N = FS * SECS
LAG_MIN, LAG_MAX = int(0.2 * FS), int(1.5 * FS)


class AutoCorr(nn.Module):
    def forward(self, e):                       # e: [B, T]
        T = e.shape[1]
        L = LAG_MAX + 1
        base = e[:, : T - L].unsqueeze(1)       # [B, 1, T-L]
        shifted = e.unfold(1, T - L, 1)[:, :L]  # [B, L, T-L]: e[t+k]
        r = torch.bmm(base, shifted.transpose(1, 2)).squeeze(1)   # [B, L]
        return r[:, LAG_MIN:] / r[:, :1]


class PanTompkinsHR(nn.Module):
    def __init__(self):
        super().__init__()
        self.deriv = nn.Conv1d(1, 1, 5, padding=2, bias=False)
        with torch.no_grad():
            self.deriv.weight.copy_(torch.tensor([[[-1.0, -2.0, 0.0, 2.0, 1.0]]]) * FS / 8)
        w = int(0.15 * FS)
        self.mwi = nn.Conv1d(1, 1, w, padding=w // 2, bias=False)
        with torch.no_grad():
            self.mwi.weight.fill_(1.0 / w)
        self.autocorr = AutoCorr()
        self.head = nn.Sequential(nn.Linear(LAG_MAX + 1 - LAG_MIN, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, ecg):                     # ecg: [B, T] in mV
        d = self.deriv(ecg.unsqueeze(1))
        e = self.mwi(d * d).squeeze(1)[:, :N]
        return self.head(self.autocorr(e)).squeeze(-1)


def make_batch(g, n):
    t = torch.arange(N, dtype=torch.float32) / FS
    hr = 50 + 100 * torch.rand(n, generator=g)
    xs = []
    for i in range(n):
        rr = 60.0 / float(hr[i])
        t0 = -float(torch.rand((), generator=g)) * rr
        x = torch.zeros(N)
        while t0 < SECS + 0.5:
            x = x + 1.1 * torch.exp(-((t - t0) / 0.012) ** 2) + 0.3 * torch.exp(-((t - t0 - 0.25) / 0.05) ** 2)
            t0 += rr * (1 + 0.02 * float(torch.randn((), generator=g)))
        x = x + 0.15 * torch.sin(2 * math.pi * 0.25 * t + 6.28 * float(torch.rand((), generator=g)))
        xs.append(x + 0.02 * torch.randn(N, generator=g))
    return torch.stack(xs), (hr - 100.0) / 30.0


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PanTompkinsHR()
    pool = [make_batch(g, 32) for _ in range(10)]
    steps = 100
    batches = [pool[i % len(pool)] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
