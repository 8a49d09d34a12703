"""ConvGRU emulator of a 2-D advection-diffusion field (next-frame prediction), trained with
SGD+Nesterov at a learning rate tuned for a mean-reduced loss while the loss is summed over
the grid.

Mechanism: the emulator encodes 4 past frames of a 16x16 periodic field with a hand-written
ConvGRU cell (3x3 convs for the update/reset gates and candidate) and decodes the next frame
with a 3x3 conv.  The lr 0.05 came from the group's notebook where the loss was
MSELoss(reduction='mean'); this script uses reduction='sum' over the 16x16 grid and the batch
(to "weight every grid cell equally"), which multiplies every gradient by B*256.  The
effective step is thousands of times too large: the first updates overshoot, the conv weights
grow each step, the GRU candidate and the decoder explode and within a few steps the loss is
inf/NaN.

ORIGIN: None (lr_too_high: the step size relative to the loss scale is the cause, not a
module).

Fix: lr divided by the number of summed elements (B*16*16), i.e. the same effective step as
the mean-reduced recipe; the summed loss is kept.  Seeds change the hidden channels, the
learning rate, the batch size and the advection velocity.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Shi et al. 2015 ConvLSTM / ConvGRU nowcasting emulators; known pitfall of keeping "
          "an lr tuned for reduction='mean' after switching to reduction='sum' (PyTorch forum "
          "'loss sum vs mean learning rate', PDEBench/PDEArena autoregressive baselines).")

N = 16


def _sequences(n, g, vel, kappa, dt=0.5, t_in=4):
    k = torch.fft.fftfreq(N, d=1.0 / N)               # integer wavenumbers
    kx, ky = torch.meshgrid(k, k, indexing="ij")
    c = torch.zeros(n, N, N, dtype=torch.complex64)
    for _ in range(4):
        i = torch.randint(0, 3, (n,), generator=g)
        j = torch.randint(0, 3, (n,), generator=g)
        a = torch.randn(n, generator=g) + 1j * torch.randn(n, generator=g)
        c[torch.arange(n), i, j] += a
    u0 = torch.fft.ifft2(c).real * (N * N / 4)      # unit-scale field
    uh = torch.fft.fft2(u0)
    frames = []
    for t in range(t_in + 1):
        prop = torch.exp((-kappa * (kx ** 2 + ky ** 2) - 1j * (vel[0] * kx + vel[1] * ky)) * dt * t)
        frames.append(torch.fft.ifft2(uh * prop).real)
    seq = torch.stack(frames[:t_in], 1).unsqueeze(2)       # (B, T, 1, N, N)
    return seq.float(), frames[t_in].unsqueeze(1).float()


class ConvGRUCell(nn.Module):
    def __init__(self, cin, ch):
        super().__init__()
        self.gates = nn.Conv2d(cin + ch, 2 * ch, 3, padding=1, padding_mode="circular")
        self.cand = nn.Conv2d(cin + ch, ch, 3, padding=1, padding_mode="circular")

    def forward(self, x, h):
        z, r = torch.sigmoid(self.gates(torch.cat([x, h], 1))).chunk(2, 1)
        hc = torch.tanh(self.cand(torch.cat([x, r * h], 1)))
        return (1 - z) * h + z * hc


class Emulator(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.ch = ch
        self.cell = ConvGRUCell(1, ch)
        self.decoder = nn.Conv2d(ch, 1, 3, padding=1, padding_mode="circular")

    def forward(self, seq):
        h = seq.new_zeros(seq.shape[0], self.ch, N, N)
        for t in range(seq.shape[1]):
            h = self.cell(seq[:, t], h)
        return seq[:, -1] + self.decoder(h)


def build(seed: int, fixed: bool = False) -> dict:
    ch = [16, 12, 20][seed % 3]
    lr = [0.05, 0.08, 0.04][seed % 3]
    bs = [8, 12, 6][seed % 3]
    vel = [(1.0, 0.5), (0.6, -0.8), (-0.9, 0.3)][seed % 3]
    steps = 80
    if fixed:
        lr = lr / (bs * N * N)
    g = torch.Generator().manual_seed(10000 + seed)
    batches = [_sequences(bs, g, vel, 0.02) for _ in range(steps)]
    torch.manual_seed(seed)
    model = Emulator(ch)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(reduction="sum"), batches=batches,
                steps=steps)
