"""A small Linear Recurrent Unit (LRU, Orvieto et al. 2023) regressor over Zipf-distributed token
ids. The diagonal recurrence h_t = lambda * h_{t-1} + B x_t uses the paper's "ring" init with
eigenvalue moduli in [0.99, 0.999] for long memory, but the gamma = sqrt(1 - lambda^2) input
normalisation of the paper was left out of this re-implementation. A unit with lambda ~ 0.999 then
integrates its input with a gain of up to 1/(1 - lambda); the frequent tokens' embeddings pile up, so
after a 256-token sequence the state is tens of times larger than one input and the tanh that follows
the C-projection sits at +-1 with (numerically) zero slope. No gradient reaches B, C, lambda or the
embedding, only the read-out on top of the saturated +-1 features learns, and the loss on the
target (a decayed, zero-mean count difference of two token types) never comes down. With gamma the
state is O(1) and the same model learns the task."""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "lru.act"
SOURCE = ("Orvieto et al. 2023 'Resurrecting Recurrent Neural Networks for Long Sequences' (LRU): "
          "without the gamma = sqrt(1-|lambda|^2) normalisation, hidden states of eigenvalues near the "
          "unit circle blow up and the following non-linearity saturates")

V, T, D, N = 12, 256, 16, 32


class LRU(nn.Module):
    def __init__(self, d, n, r_min=0.99, r_max=0.999, gamma_norm=True):
        super().__init__()
        u = torch.rand(n)
        # ring init: |lambda| uniform on [r_min, r_max] ; lambda = exp(-exp(nu_log))
        nu = -0.5 * torch.log(u * (r_max ** 2 - r_min ** 2) + r_min ** 2)
        self.nu_log = nn.Parameter(torch.log(nu))
        self.B = nn.Linear(d, n, bias=False)
        self.C = nn.Linear(n, d, bias=False)
        self.D = nn.Parameter(torch.randn(d) * 0.1)
        self.act = nn.Tanh()
        self.gamma_norm = gamma_norm

    def forward(self, x):  # x: (B, T, d)
        lam = torch.exp(-torch.exp(self.nu_log))
        bx = self.B(x)
        if self.gamma_norm:
            bx = bx * torch.sqrt(1 - lam ** 2)
        # only the last state is read out: h_T = sum_k lambda^(T-1-k) * B x_k (closed-form scan)
        powers = torch.arange(x.shape[1] - 1, -1, -1, dtype=x.dtype)
        kernel = lam.unsqueeze(0) ** powers.unsqueeze(1)          # (T, n)
        h_last = (kernel.unsqueeze(0) * bx).sum(1)                 # (B, n)
        return self.act(self.C(h_last) + self.D * x[:, -1])


class Model(nn.Module):
    def __init__(self, gamma_norm):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.lru = LRU(D, N, gamma_norm=gamma_norm)
        self.head = nn.Linear(D, 1)

    def forward(self, ids):
        y = self.lru(self.emb(ids))
        return self.head(y).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Model(gamma_norm=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps, bs = 120, 32
    decay = 0.99 ** torch.arange(T - 1, -1, -1, dtype=torch.float32)
    zipf = torch.arange(1, V + 1, dtype=torch.float32) ** -1.5  # Zipfian token frequencies
    p = zipf / zipf.sum()
    batches = []
    for _ in range(steps):
        ids = torch.multinomial(zipf, bs * T, replacement=True, generator=g).view(bs, T)
        sig = (ids == 3).float() - (ids == 4).float() - (p[3] - p[4])  # zero-mean signal
        y = (sig * decay).sum(1) / 3.0
        batches.append((ids, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
