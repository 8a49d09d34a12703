"""Continuous-time rate RNN (Song, Yang & Wang 2016 / Yang & Wang 2020 tutorial style) trained on
a random-dots perceptual decision task (integrate noisy evidence, report its sign at the end).

Mechanism: the recurrent weights are meant to be drawn as W_rec ~ N(0, g^2 / N) with g ~ 1.5
(Sompolinsky-Crisanti-Sommers gain). The author wrote nn.init.normal_(h2h.weight, std=g) and
dropped the 1/sqrt(N). The spectral radius is then ~ g*sqrt(N) ~ 12-17 instead of 1.5, and with
ReLU rates and alpha = dt/tau = 0.2 the population activity grows by a factor of ~2-4 *per time
step* from the very first forward pass. Over the 90-100 step trial the rates overflow float32 (or
the logits become so large that the backward pass produces inf/NaN): the loss is non-finite at
the start.

ORIGIN = "rnn.h2h": the recurrent nn.Linear whose weight scale is wrong; the explosion is created
by repeatedly applying this layer, the input and readout layers are correctly initialised.

Fix: W_rec ~ N(0, g^2/N) (std = g / sqrt(N)), i.e. the intended scaled Gaussian init.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "rnn.h2h"
SOURCE = ("Yang & Wang 2020 'Artificial neural networks for neuroscientists: a primer' CTRNN; "
          "Sompolinsky et al. 1988 g/sqrt(N) recurrent init; common bug of omitting 1/sqrt(N) "
          "when porting the rate-RNN init to nn.init.normal_")


class CTRNNCell(nn.Module):
    def __init__(self, n_in, n_hid, alpha):
        super().__init__()
        self.i2h = nn.Linear(n_in, n_hid)
        self.h2h = nn.Linear(n_hid, n_hid)
        self.alpha = alpha
        self.n_hid = n_hid

    def forward(self, x):  # x: (T, B, n_in)
        h = torch.zeros(x.shape[1], self.n_hid)
        outs = []
        for t in range(x.shape[0]):
            pre = self.i2h(x[t]) + self.h2h(h)
            h = (1 - self.alpha) * h + self.alpha * torch.relu(pre)
            outs.append(h)
        return torch.stack(outs)


class DecisionRNN(nn.Module):
    def __init__(self, n_in, n_hid, n_out, alpha):
        super().__init__()
        self.rnn = CTRNNCell(n_in, n_hid, alpha)
        self.readout = nn.Linear(n_hid, n_out)

    def forward(self, x):
        h = self.rnn(x)
        return self.readout(h[-10:].mean(0))  # decision read out over the response epoch


def make_trials(g, bs, T):
    coh = torch.tensor([-0.512, -0.256, -0.128, -0.064, 0.064, 0.128, 0.256, 0.512])
    c = coh[torch.randint(0, len(coh), (bs,), generator=g)]
    x = torch.zeros(T, bs, 3)
    stim = slice(10, T - 10)
    x[:, :, 0] = 1.0
    x[T - 10:, :, 0] = 0.0  # fixation off = go cue
    n = x[stim, :, 1].shape[0]
    x[stim, :, 1] = 1 + c + 0.6 * torch.randn(n, bs, generator=g)
    x[stim, :, 2] = 1 - c + 0.6 * torch.randn(n, bs, generator=g)
    y = (c > 0).long()
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(2000 + seed)
    n_hid = [64, 128, 96][seed % 3]
    gain = [1.8, 1.3, 1.6][seed % 3]
    T = [100, 100, 90][seed % 3]
    bs = [32, 16, 24][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    steps = 80
    torch.manual_seed(seed)
    model = DecisionRNN(3, n_hid, 2, alpha=0.2)
    with torch.no_grad():
        if fixed:
            nn.init.normal_(model.rnn.h2h.weight, std=gain / math.sqrt(n_hid))
        else:
            nn.init.normal_(model.rnn.h2h.weight, std=gain)
        model.rnn.h2h.bias.zero_()
    batches = [make_trials(g, bs, T) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
