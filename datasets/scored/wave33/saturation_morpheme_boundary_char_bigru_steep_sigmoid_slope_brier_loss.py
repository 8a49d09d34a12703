"""Unsupervised-to-supervised morphological segmentation for a low-resource agglutinative
language: a character BiGRU scores every position, a "steep" sigmoid turns the score into a
boundary probability and the model is trained with the Brier score (MSE between the
probability and the 0/1 gold boundary from a small hand-segmented word list).  SGD with
momentum.

Mechanism: the boundary probability is computed as sigmoid(slope * score) with slope = 15-25,
a trick carried over from a differentiable-segmentation prototype to make the outputs
"near-binary so the 0.5 threshold is stable".  The scores are O(1) at initialisation, so
slope * score is O(10-50) and almost every position's sigmoid is already at 0 or 1; for a
position saturated on the wrong side the Brier gradient 2 (p - y) * slope * p (1 - p) is
~1e-5 .. 1e-20, so wrong boundaries can never flip.  The loss stays at the fraction of
wrongly saturated positions (~0.15-0.3, no inf/NaN) while the same model with slope 1 learns.

ORIGIN: ``boundary`` -- the Linear scorer whose outputs are multiplied by the slope and fed
to the saturated sigmoid.

Fix (fixed=True): slope = 1, i.e. sigmoid pre-activations of order 1; same model, loss,
optimiser, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "boundary"
SOURCE = ("Steep / temperature-scaled sigmoid gates in differentiable segmentation prototypes; "
          "sigmoid + squared-error saturation (Glorot & Bengio 2010; LeCun et al. 'Efficient "
          "BackProp'); supervised morphological segmentation of low-resource languages "
          "(Kann, Cotterell & Schuetze 2018, 'Fortification of neural morphological segmentation').")

N_CHARS = 36


class BoundaryTagger(nn.Module):
    def __init__(self, emb, hidden, slope):
        super().__init__()
        self.slope = slope
        self.emb = nn.Embedding(N_CHARS, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.boundary = nn.Linear(2 * hidden, 1)

    def forward(self, chars):
        h, _ = self.rnn(self.emb(chars))
        return torch.sigmoid(self.slope * self.boundary(h).squeeze(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [48, 64, 32][seed % 3]
    slope = 1.0 if fixed else [20.0, 15.0, 25.0][seed % 3]
    lr = [0.5, 0.3, 0.6][seed % 3]
    bs = [32, 48, 24][seed % 3]
    L = 14
    steps = 150

    torch.manual_seed(seed)
    model = BoundaryTagger(24, hidden, slope)

    # a boundary follows position t when char t closes a morph and char t+1 opens one
    # (e.g. vowel + consonant cluster at a suffix seam)
    closes = torch.rand(N_CHARS, generator=g) < 0.4
    opens = torch.rand(N_CHARS, generator=g) < 0.4
    batches = []
    for _ in range(steps):
        x = torch.randint(0, N_CHARS, (bs, L), generator=g)
        nxt = torch.cat([x[:, 1:], x[:, :1]], 1)
        y = (closes[x] & opens[nxt]).float()
        y[:, -1] = 1.0                       # word end is always a boundary
        batches.append((x, y))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(),
                batches=batches, steps=steps)
