"""OFDM neural equaliser trained directly on error-vector magnitude (EVM): an MLP maps each
resource element's channel estimate (and the slot SNR) to a complex one-tap equaliser
coefficient w, the equalised symbol is w * Y, and the loss is the per-OFDM-symbol RMS EVM,
sqrt(mean_subcarriers |x_hat - x|^2), averaged over symbols and slots (the KPI the radio
team reports); Adam.

Mechanism: slots are stored as 14 OFDM symbols x 72 subcarriers. Ordinary slots use all
14 symbols, but from some point of the data stream (the step changes with the seed) the
batches also carry mini-slot (URLLC-style) transmissions of 2..7 symbols that the loader
zero-pads to 14: the padded symbols have Y = 0 and target x = 0. The equaliser output is
w * 0 = 0 exactly, so the squared error of those symbols is exactly 0 and the loss takes
sqrt(0). Its forward value is fine (0), but sqrt's backward is 1 / (2 sqrt(0)) = inf,
times the exactly-zero derivative of the squared error gives 0 * inf = NaN: the
gradients, then every weight after the Adam step, are NaN and the next loss is NaN. The
run is calm until the first padded batch.

ORIGIN = "coef.2": the loss itself is not a module; the output Linear of the coefficient
MLP is the first module whose gradient becomes non-finite (the NaN enters through
dL/dx_hat and then dL/dw), so it is where the failure first shows inside the model.

Fix: sqrt(mean |e|^2 + 1e-12) (an epsilon inside the root); same model, data and steps.
"""
import math

import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "coef.2"
SOURCE = (
    "RMS-EVM training objectives for learned OFDM receivers/equalisers (e.g. DeepRx, "
    "Honkala et al. 2021 report EVM-type metrics); PyTorch issue threads on "
    "'sqrt backward at 0 gives nan' (torch.sqrt/torch.norm of an all-zero vector) with "
    "zero-padded frames."
)

N_SYM, N_SC = 14, 72


def _slot_batch(g, n, n_taps, minislot):
    """Returns ((Y, H_hat, snr), X) with complex parts stacked in the last dim."""
    pdp = torch.exp(-torch.arange(n_taps, dtype=torch.float32) / 2.0)
    pdp = pdp / pdp.sum()
    taps = torch.complex(torch.randn(n, n_taps, generator=g), torch.randn(n, n_taps, generator=g)) * torch.sqrt(pdp / 2)
    h_t = torch.zeros(n, 128, dtype=torch.complex64)
    h_t[:, :n_taps] = taps
    H = torch.fft.fft(h_t, dim=1)[:, :N_SC].unsqueeze(1).expand(n, N_SYM, N_SC)       # block fading
    qam = torch.tensor([-3.0, -1.0, 1.0, 3.0]) / math.sqrt(10)
    X = torch.complex(qam[torch.randint(0, 4, (n, N_SYM, N_SC), generator=g)],
                      qam[torch.randint(0, 4, (n, N_SYM, N_SC), generator=g)])
    snr_db = 8 + 14 * torch.rand(n, 1, 1, generator=g)
    s2 = 10 ** (-snr_db / 10)
    noise = torch.complex(torch.randn(n, N_SYM, N_SC, generator=g), torch.randn(n, N_SYM, N_SC, generator=g))
    Y = H * X + torch.sqrt(s2 / 2) * noise
    est_err = torch.complex(torch.randn(n, 1, N_SC, generator=g), torch.randn(n, 1, N_SC, generator=g))
    H_hat = H + torch.sqrt(s2 / 8) * est_err
    if minislot:
        k = max(1, n // 4)
        for i in range(k):
            L = int(torch.randint(2, 8, (1,), generator=g))
            Y[i, L:] = 0
            X[i, L:] = 0
    st = lambda z: torch.stack([z.real, z.imag], -1).float()
    snr_feat = ((snr_db - 15) / 5).expand(n, N_SYM, N_SC).unsqueeze(-1).float()
    return (st(Y), st(H_hat), snr_feat), st(X)


class NeuralEqualizer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.coef = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, Y, H_hat, snr):
        w = self.coef(torch.cat([H_hat, snr], -1))
        yr, yi = Y[..., 0], Y[..., 1]
        wr, wi = w[..., 0], w[..., 1]
        return torch.stack([wr * yr - wi * yi, wr * yi + wi * yr], -1)


def make_rms_evm(eps):
    def rms_evm(x_hat, x):
        err2 = ((x_hat - x) ** 2).sum(-1)                 # |e|^2 per resource element
        return torch.sqrt(err2.mean(-1) + eps).mean()     # RMS over subcarriers, mean over symbols
    return rms_evm


def build(seed: int, fixed: bool = False) -> dict:
    hidden = [64, 32, 128][seed % 3]
    batch = [16, 24, 8][seed % 3]
    lr = [3e-3, 2e-3, 5e-3][seed % 3]
    n_taps = [6, 4, 8][seed % 3]
    first_minislot = [47, 71, 29][seed % 3]
    steps = 100

    g = torch.Generator().manual_seed(5000 + seed)
    batches = []
    for i in range(steps):
        minislot = i >= first_minislot and (i - first_minislot) % 3 == 0
        batches.append(_slot_batch(g, batch, n_taps, minislot))

    torch.manual_seed(seed)
    model = NeuralEqualizer(hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = make_rms_evm(1e-12 if fixed else 0.0)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
