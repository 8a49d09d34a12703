"""Text-based ideal-point regression: predict each legislator's first-dimension DW-NOMINATE
score (in [-1, 1]) from the document-term matrix of everything they said on the floor in a
Congress (400 most frequent partisan bigrams), with a two-hidden-layer ReLU MLP, MSE, SGD.

Mechanism (unscaled_inputs). The feature matrix is the raw term COUNTS summed over a
legislator's speeches. Legislators differ enormously in how much they speak (a few hundred to
tens of thousands of words), so a feature column ranges from 0 to several hundred and a row's
norm from ~10 to ~1e3. The first layer's pre-activations are therefore 10-1000x larger than
for standardised inputs, the first forward pass already gives predictions of order 10-100 for
a target of order 1, and the SGD gradient of the first layer is proportional to the counts: the
first update overshoots, the next forward pass is larger still, and the loss runs to inf/NaN
in a few steps.

ORIGIN = "mlp.0": the first Linear, which receives the unscaled counts and where the oversized
pre-activations and gradients originate.

Fix: the usual text-as-data preprocessing -- relative frequencies (counts / speech length),
then standardisation of each term column (z-scores computed on the training
batches). Same model, optimiser, learning rate, batches and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "mlp.0"
SOURCE = ("Raw document-term counts fed to a neural regressor (Gentzkow, Shapiro & Taddy 2019 "
          "normalise by speech length; Taddy 2013 'Multinomial inverse regression for text "
          "analysis'); NaN loss from unnormalised inputs with SGD (PyTorch forums)")


class IdealPointMLP(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(vocab, width), nn.ReLU(),
                                 nn.Linear(width, width), nn.ReLU(),
                                 nn.Linear(width, 1))

    def forward(self, x):
        return self.mlp(x).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    lr = [0.01, 0.005, 0.02][seed % 3]
    bs = [32, 48, 64][seed % 3]
    steps = 120
    V = 400

    model = IdealPointMLP(V, width)
    base = torch.distributions.Dirichlet(torch.full((V,), 0.5)).sample()
    slant = torch.randn(V, generator=g) * 0.8               # partisan loading of each bigram

    def sample(n):
        ideal = torch.rand(n, generator=g) * 2 - 1
        length = torch.exp(torch.empty(n).uniform_(5.5, 10.0, generator=g)).round()
        logits = torch.log(base + 1e-6) + ideal[:, None] * slant
        p = torch.softmax(logits, 1)
        counts = torch.poisson(p * length[:, None], generator=g)          # bigram hits
        return counts, ideal

    batches = [sample(bs) for _ in range(steps)]
    if fixed:
        freq = [c / c.sum(1, keepdim=True).clamp_min(1.0) for c, _ in batches]
        allf = torch.cat(freq)
        mu, sd = allf.mean(0), allf.std(0).clamp_min(1e-6)
        batches = [((f - mu) / sd, y) for f, (_, y) in zip(freq, batches)]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
