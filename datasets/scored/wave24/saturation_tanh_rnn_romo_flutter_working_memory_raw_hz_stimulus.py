"""Vanilla tanh RNN (nn.RNN) trained on the Romo vibrotactile parametric working-memory task:
flutter frequency f1 (10-34 Hz) is presented, held over a delay, then f2 is presented and the
network reports whether f1 > f2 (cross-entropy on the response epoch).

Mechanism: the stimulus channel carries the flutter frequency in Hz as-is (10..34), with
PyTorch's default U(-1/sqrt(H), 1/sqrt(H)) input weights. The recurrent units' pre-activations
during the stimulus epochs are tens of units wide, so every tanh unit is pinned at +-1 and its
sign does not depend on *which* frequency was shown: the hidden state carries no information
about f1 or f2, and the tanh derivative (1 - h^2 ~ 1e-8 .. 0) blocks the gradient that would
shrink the input weights. The loss stays at ln 2 (chance) for the whole run; nothing is
non-finite. (The loss is not huge, so this is not the 'huge loss from step 0' of unscaled
targets: the damage is done entirely by the saturated tanh.)

ORIGIN = "rnn": the nn.RNN whose tanh units saturate on the stimulus input; the readout is fine.

Fix: feed the stimulus in the normalised units used in the modelling papers ((f - 22) / 8), so
pre-activations are O(1). Same network, task, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "rnn"
SOURCE = ("Romo et al. 1999 parametric working memory; RNN models of it (Barak et al. 2013, "
          "Song, Yang & Wang 2016) normalise the frequency input; raw-Hz inputs saturate tanh "
          "units (common report: RNN stuck at chance, vanishing gradients through tanh)")


class RomoRNN(nn.Module):
    def __init__(self, hid):
        super().__init__()
        self.rnn = nn.RNN(2, hid, nonlinearity="tanh", batch_first=True)
        self.readout = nn.Linear(hid, 2)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.readout(h[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(13000 + seed)
    hid = [64, 80, 128][seed % 3]
    delay = [10, 8, 12][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = [3e-3, 2.5e-3, 3e-3][seed % 3]
    steps = 250
    freqs = torch.tensor([10., 14., 18., 22., 26., 30., 34.])
    batches = []
    for _ in range(steps):
        i1 = torch.randint(0, 7, (bs,), generator=g)
        d = torch.where(torch.rand(bs, generator=g) < 0.5, -1, 1)
        i2 = (i1 + d).clamp(0, 6)
        i2 = torch.where(i2 == i1, i1 - d, i2)
        f1, f2 = freqs[i1], freqs[i2]
        T = 5 + delay + 5 + 3
        x = torch.zeros(bs, T, 2)
        s1, s2 = (f1, f2) if not fixed else ((f1 - 22) / 8, (f2 - 22) / 8)
        x[:, 0:5, 0] = s1[:, None]
        x[:, 5 + delay:10 + delay, 0] = s2[:, None]
        x[:, -3:, 1] = 1.0  # response cue
        y = (f1 > f2).long()
        batches.append((x, y))
    torch.manual_seed(seed)
    model = RomoRNN(hid)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
