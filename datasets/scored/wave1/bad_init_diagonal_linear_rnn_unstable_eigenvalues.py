"""Diagonal linear recurrent layer (LRU/S4D-like: h_t = a * h_{t-1} + B x_t, y_t = C h_t, followed by
a position-wise MLP) used as a next-step forecaster for 96-step multi-seasonal sensor series. The
recurrence coefficients were initialised as torch.rand(N) + 0.5 to get "long memory values near
1", i.e. uniformly in [0.5, 1.5]: every channel with a > 1 is an unstable mode whose state is
multiplied by a at every time step, so the activation scale grows geometrically along the sequence
(1.45^96 ~ 1e15) from step 0. The predictions are ~1e13-1e14 and the MSE ~1e26-1e28 on the first
batch; Adam moves each a by only ~lr = 2e-3 per step, far too little to pull the unstable modes
back inside the unit circle within the run, so the loss stays at that astronomical level (a stall
with finite values). The fixed run only initialises the coefficients inside the unit circle
(uniform on [0.9, 0.999], the LRU 'ring' initialisation); nothing else changes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "rnn"
SOURCE = ("Orvieto et al. 2023 'Resurrecting Recurrent Neural Networks for Long Sequences' (LRU: "
          "eigenvalues must be initialised inside the unit disk, ring init r in [r_min, r_max])")


class DiagLinearRNN(nn.Module):
    def __init__(self, d_in, n_state, stable_init):
        super().__init__()
        if stable_init:
            a = torch.empty(n_state).uniform_(0.9, 0.999)
        else:
            a = torch.rand(n_state) + 0.5
        self.a = nn.Parameter(a)
        self.B = nn.Linear(d_in, n_state, bias=False)
        self.C = nn.Linear(n_state, d_in)
        self.gamma = nn.Parameter(torch.ones(n_state) * 0.3)   # input normalisation (LRU's gamma)

    def forward(self, x):                                    # B x T x d
        u = self.B(x) * self.gamma
        h = torch.zeros_like(u[:, 0])
        hs = []
        for t in range(u.shape[1]):
            h = self.a * h + u[:, t]
            hs.append(h)
        return self.C(torch.stack(hs, 1))


class LRUForecaster(nn.Module):
    def __init__(self, d_model=16, n_state=32, stable_init=True):
        super().__init__()
        self.enc = nn.Linear(1, d_model)
        self.rnn = DiagLinearRNN(d_model, n_state, stable_init)
        self.mlp = nn.Sequential(nn.Linear(d_model, 32), nn.GELU(), nn.Linear(32, d_model))
        self.head = nn.Linear(d_model, 1)

    def forward(self, x):
        h = self.enc(x[..., None])
        h = h + self.rnn(h)
        h = h + self.mlp(h)
        return self.head(h).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    T, B = 96, 16
    t = torch.arange(T + 1).float()
    batches = []
    for _ in range(20):
        p1 = 2 * math.pi * torch.rand(B, 1, generator=g); p2 = 2 * math.pi * torch.rand(B, 1, generator=g)
        amp = 0.5 + torch.rand(B, 1, generator=g)
        s = amp * torch.sin(2 * math.pi * t / 24 + p1) + 0.5 * torch.sin(2 * math.pi * t / 7 + p2)
        s = s + 0.1 * torch.randn(B, T + 1, generator=g)
        batches.append((s[:, :-1], s[:, 1:]))
    model = LRUForecaster(stable_init=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda p, y: F.mse_loss(p[:, 8:], y[:, 8:]),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
