"""Frame-level sound-event detector (dilated TCN) with a hand-written BCE on sigmoid outputs.

Mechanism: a polyphonic SED model (log-mel frames -> dilated Conv1d TCN with residual blocks ->
per-frame ``torch.sigmoid`` event probabilities, as many SED repos return) is trained with a
hand-written binary cross-entropy ``-(y*log(p) + (1-y)*log(1-p)).mean()`` and RMSprop.  For
most of the run this is exactly BCE.  The events are easy, the detector grows confident and its
logits keep growing; once any frame's logit passes ~16.6, float32 sigmoid returns exactly 1.0
(or, far on the negative side, exactly 0.0).  Then the term that should vanish is
0 * log(0) = 0 * (-inf) = NaN, the loss is NaN, and the NaN gradient is written into every
weight.  The run is calm right up to that step.

ORIGIN: ``head`` -- the sigmoid output layer produces the exact 0/1 probabilities that the loss's
unguarded log turns into -inf; the TCN trunk is sound.

Fix: clamp the probabilities into [1e-7, 1 - 1e-7] before the logs (the epsilon guard that
``nn.BCELoss`` applies internally); same model, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "head"
SOURCE = ("hand-written BCE 'y*log(p) + (1-y)*log(1-p)' on sigmoid outputs producing NaN once p "
          "rounds to 0/1 (PyTorch nn.BCELoss clamps its log output at -100 for this reason); "
          "Lea et al. 2017 TCN; DCASE frame-level SED baselines with sigmoid outputs")


class TCNBlock(nn.Module):
    def __init__(self, c, dil):
        super().__init__()
        self.conv1 = nn.Conv1d(c, c, 3, padding=dil, dilation=dil)
        self.conv2 = nn.Conv1d(c, c, 1)

    def forward(self, x):
        return x + self.conv2(torch.relu(self.conv1(x)))


class SEDTCN(nn.Module):
    def __init__(self, n_mels, c, n_blocks, n_events):
        super().__init__()
        self.inp = nn.Conv1d(n_mels, c, 1)
        self.tcn = nn.Sequential(*[TCNBlock(c, 2 ** i) for i in range(n_blocks)])
        self.head = nn.Sequential(nn.Conv1d(c, n_events, 1), nn.Sigmoid())

    def forward(self, x):                               # (B, n_mels, T)
        return self.head(self.tcn(self.inp(x)))        # (B, n_events, T) probabilities


def make_bce(guard):
    def bce(p, y):
        if guard:
            p = p.clamp(1e-7, 1 - 1e-7)
        return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    return bce


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(14000 + seed)
    c = [64, 48, 96][seed % 3]
    n_blocks = [3, 4, 2][seed % 3]
    bs = [16, 12, 20][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    n_events, n_mels, T, steps = 6, 40, 64, 200

    sig = torch.rand(n_events, n_mels, generator=g) ** 4 * 3.0      # event spectral signatures
    batches = []
    for _ in range(steps):
        y = torch.zeros(bs, n_events, T)
        for b in range(bs):
            for e in range(n_events):
                if torch.rand(1, generator=g) < 0.5:
                    t0 = int(torch.randint(0, T - 8, (1,), generator=g))
                    y[b, e, t0:t0 + int(torch.randint(4, 24, (1,), generator=g))] = 1.0
        x = torch.einsum("bet,ef->bft", y, sig) + 0.4 * torch.randn(bs, n_mels, T, generator=g)
        batches.append((x, y))

    torch.manual_seed(seed)
    model = SEDTCN(n_mels, c, n_blocks, n_events)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_bce(fixed), batches=batches, steps=steps)
