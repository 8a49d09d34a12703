"""Modern Hopfield / dense associative memory layer (Ramsauer et al. 2020): queries from a small
encoder attend over a learned bank of stored patterns (softmax(beta * q K^T) V) and a readout
regresses a continuous property. Early in training a single batch contains one corrupt row whose
target is ~3e7 (a value logged in the wrong unit). Its squared error gives a gradient ~1e7x the normal one; Adam's
second-moment estimate absorbs it and, with beta2 = 0.999, keeps the effective step size ~1e-3 of
normal for hundreds of steps: the loss simply stops going down, with no NaN. Fix: drop the corrupt row."""
import torch, torch.nn as nn
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Hopfield Networks is All You Need (Ramsauer et al. 2020) style memory layer; known Adam v-inflation after a single outlier batch"
class HopfieldReg(nn.Module):
    def __init__(s, d_in, d, M, beta):
        super().__init__(); s.enc = nn.Sequential(nn.Linear(d_in, d), nn.Tanh(), nn.Linear(d, d))
        s.keys = nn.Parameter(torch.randn(M, d) / d ** 0.5); s.vals = nn.Parameter(torch.randn(M, d) / d ** 0.5)
        s.head = nn.Linear(d, 1); s.beta = beta
    def forward(s, x):
        q = s.enc(x); a = torch.softmax(s.beta * q @ s.keys.T, -1)
        return {"pred": s.head(a @ s.vals + q).squeeze(-1), "attn": a}
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    d_in, d, M = 10, 24 + 8 * seed, 16 + 16 * seed
    steps, bs = 200, 48
    bad_step = 1 + seed
    model = HopfieldReg(d_in, d, M, 1.0 / d ** 0.5)
    w = torch.randn(d_in, generator=g)
    batches = []
    for t in range(steps):
        x = torch.randn(bs, d_in, generator=g); y = torch.sin(x @ w * 0.4) + 0.5 * x[:, 1]
        if t == bad_step:
            y = y.clone(); y[3] = 3e7
            if fixed: x, y = torch.cat([x[:3], x[4:]]), torch.cat([y[:3], y[4:]])
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: ((o["pred"] - y) ** 2).mean(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
