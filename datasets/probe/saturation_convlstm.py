"""saturation: a ConvLSTM whose gate bias is filled with a large "forget bias" for all four gates.

Mechanism: a ConvLSTM cell (Shi et al. 2015) in the common PyTorch layout: one Conv2d on
concat(x_t, h_{t-1}) gives 4 x hidden channels, split into the input, forget and output gates
(sigmoid) and the candidate g (tanh); c_t = f * c_{t-1} + i * g, h_t = o * tanh(c_t). It is
unrolled over 5-7 frames of a toy video (a bright square moving one pixel per frame in one of
four directions on a noisy background); the last hidden state is average-pooled to 2x2 and a
linear head classifies the direction, which no single frame shows.

The author meant to apply the LSTM "forget-gate bias" recipe (start with the forget gate open,
Gers et al. 2000; Jozefowicz et al. 2015), with a large value copied from a long-horizon config
(5-8), but wrote ``cell.conv.bias.data.fill_(forget_bias)``, which sets the bias of all four gate
blocks. Every gate pre-activation is then b +- ~0.5 (the conv's contribution is small next to
b): i, f and o sit at sigmoid(b) ~ 0.99-0.9997, g at tanh(b) ~ 0.9999-1, so the cell adds ~1 per
frame (c_t ~ t, tanh(c_t) ~ 1) and h_t = o * tanh(c_t) ~ 1 in every channel, location and
sample. The state no longer carries the input, and every gradient into the gate conv is
multiplied by sigmoid'(b) ~ 3e-4-7e-3 or tanh'(b) ~ 5e-7-2e-4 (and by tanh'(c_t) ~ 1e-5 on the
way out of the cell): the zero-initialised head sees a near-constant feature and can only learn
the class prior. Adam's normalised steps do move the sigmoid gates' biases over the run, but
from one tail to the other (their pre-activations spread to about +-10) while the candidate g
stays pinned at tanh ~ 1, so the cross-entropy loss stays at log(4) to the end: a plateau, not a
divergence.

ORIGIN: ``cell.gate_sigmoid``, the Sigmoid of the i/f/o gates, the first saturating module called
in each step (``cell.gate_tanh`` on the candidate and ``cell.cell_tanh`` on the cell state
saturate too, after it; the conv before them is finite and ordinary apart from its bias).
Fixed: the same model, data and optimizer with the bias set as intended - ``forget_bias`` on the
forget-gate slice only, the input, output and candidate biases left at their default init - so
the gates start in their sensitive range and the loss falls.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "cell.gate_sigmoid"
SOURCE = (
    "Shi et al. 2015 (Convolutional LSTM) and the widely copied ConvLSTM_pytorch cell (one conv "
    "on concat(x, h) split into i, f, o, g); the forget-gate bias trick (Gers, Schmidhuber & "
    "Cummins 2000; Jozefowicz et al. 2015) mis-applied to the whole bias vector; Hochreiter 1991 "
    "and Pascanu et al. 2013 on vanishing gradients through saturated gates."
)


class ConvLSTMCell(nn.Module):
    def __init__(self, c_in: int, hidden: int, kernel: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.conv = nn.Conv2d(c_in + hidden, 4 * hidden, kernel, padding=kernel // 2)
        self.gate_sigmoid = nn.Sigmoid()
        self.gate_tanh = nn.Tanh()
        self.cell_tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, state: tuple) -> tuple:
        h, c = state
        a = self.conv(torch.cat([x, h], dim=1))
        ifo, g = a[:, : 3 * self.hidden], a[:, 3 * self.hidden :]
        i, f, o = self.gate_sigmoid(ifo).chunk(3, dim=1)
        g = self.gate_tanh(g)
        c = f * c + i * g
        h = o * self.cell_tanh(c)
        return h, c


class ConvLSTMClassifier(nn.Module):
    def __init__(self, hidden: int, kernel: int, classes: int) -> None:
        super().__init__()
        self.cell = ConvLSTMCell(1, hidden, kernel)
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.head = nn.Linear(4 * hidden, classes)

    def forward(self, video: torch.Tensor) -> torch.Tensor:  # (batch, time, 1, H, W)
        b, t, _, hgt, wid = video.shape
        h = video.new_zeros(b, self.cell.hidden, hgt, wid)
        c = torch.zeros_like(h)
        for k in range(t):
            h, c = self.cell(video[:, k], (h, c))
        return self.head(self.pool(h).flatten(1))


def _videos(g: torch.Generator, n: int, frames: int, size: int) -> tuple:
    """A 2x2 bright square moving one pixel per frame up, down, left or right."""
    y = torch.randint(0, 4, (n,), generator=g)
    step = torch.tensor([[-1, 0], [1, 0], [0, -1], [0, 1]])[y]  # (n, 2): d_row, d_col
    lo, hi = frames, size - frames - 2
    start = torch.randint(lo, hi + 1, (n, 2), generator=g)
    video = 0.2 * torch.rand(n, frames, 1, size, size, generator=g)
    amp = 0.7 + 0.3 * torch.rand(n, generator=g)
    rows = torch.arange(n)
    for k in range(frames):
        pos = start + k * step
        for dr in (0, 1):
            for dc in (0, 1):
                video[rows, k, 0, pos[:, 0] + dr, pos[:, 1] + dc] = amp
    return video, y


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    hidden = rng.choice([6, 8, 10])
    kernel = 3
    frames = rng.choice([5, 6, 7])
    size = 2 * frames + 4
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([120, 150, 180])
    lr = rng.choice([8e-3, 1e-2])
    forget_bias = rng.choice([5.0, 6.0, 8.0])

    g = torch.Generator().manual_seed(350_000 + seed)
    batches = [_videos(g, batch, frames, size) for _ in range(steps)]

    torch.manual_seed(seed)
    model = ConvLSTMClassifier(hidden, kernel, 4)
    with torch.no_grad():
        if fixed:  # as intended: the forget-gate slice only
            model.cell.conv.bias[hidden : 2 * hidden].fill_(forget_bias)
        else:  # the bug: every gate's bias
            model.cell.conv.bias.fill_(forget_bias)
        nn.init.zeros_(model.head.weight)  # zero-initialised head: the run starts at log(4)
        nn.init.zeros_(model.head.bias)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
