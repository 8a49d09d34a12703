"""Symbolic melody language model: embedding -> 2-layer GRU -> linear over 40 pitch tokens,
next-note cross-entropy on monophonic melodies (folk-tune style: scale-constrained steps, leaps
and phrase cadences); RMSprop.

Mechanism: RMSprop with lr 0.2-0.3 (a Keras char-RNN value scaled up "because the model is
small"). PyTorch's RMSprop has no bias correction and alpha 0.99, so for the first hundred steps the square average is a small fraction of g^2 and each update is
several times lr per weight - far larger than the ~0.1 scale of the GRU and embedding weights.
The update/weight ratio is ~1 instead of ~1e-3: the recurrent weights are thrown into gate
saturation and the output layer swings between over-confident wrong predictions, so the
cross-entropy rises above its starting value and oscillates there (finite), while the same
model at a sane learning rate learns the melodic statistics.

ORIGIN: None - the step size belongs to the optimiser, no module starts it.

Fix: RMSprop with lr 2e-3 - nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Char-RNN / folk-rnn style sequence models trained with RMSprop (Sturm et al. 2016 "
          "folk-rnn); RMSprop without bias correction takes very large first steps "
          "(Kingma & Ba 2015 section 6 discussion); 'loss increases then plateaus with "
          "RMSprop lr=0.1' forum reports.")

V = 40


class MelodyGRU(nn.Module):
    def __init__(self, emb, hidden):
        super().__init__()
        self.embed = nn.Embedding(V, emb)
        self.gru = nn.GRU(emb, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, V)

    def forward(self, x):
        h, _ = self.gru(self.embed(x))
        return self.out(h)


def _melodies(g, B, T):
    scale = torch.tensor([0, 2, 4, 5, 7, 9, 11])
    deg = torch.randint(7, 14, (B,), generator=g)
    key = torch.randint(0, 6, (B,), generator=g)
    seq = []
    for t in range(T + 1):
        if t % 8 == 7:
            deg = deg - (deg % 7)  # cadence on the tonic
        else:
            r = torch.rand(B, generator=g)
            step = torch.where(r < 0.35, -1, torch.where(r < 0.7, 1, torch.where(r < 0.85, 2, -2)))
            deg = (deg + step).clamp(3, 17)
        pitch = 12 * (deg // 7) + scale[deg % 7] + key - 12
        seq.append(pitch.clamp(0, V - 1))
    s = torch.stack(seq, 1)
    return s[:, :-1], s[:, 1:]


def ce_seq(logits, target):
    return nn.functional.cross_entropy(logits.reshape(-1, V), target.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(10000 + seed)
    emb = [16, 32, 24][seed % 3]
    hidden = [64, 96, 128][seed % 3]
    B = [16, 24, 32][seed % 3]
    lr = 2e-3 if fixed else [0.2, 0.3, 0.25][seed % 3]
    steps = 100
    torch.manual_seed(seed)
    model = MelodyGRU(emb, hidden)
    batches = [_melodies(g, B, 32) for _ in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=ce_seq, batches=batches, steps=steps)
