"""EEG emotion recognition (DEAP-style): a deep fully-connected network with logistic-sigmoid
hidden units (as in much of the 1990s/2000s EEG-ANN literature and many course notebooks) maps
log band-power features (32 electrodes x 5 bands, z-scored) to high/low valence, with a sigmoid
output and nn.BCELoss, trained with plain SGD.

Mechanism: 6-9 stacked sigmoid layers with the default PyTorch init. The sigmoid's derivative is
at most 0.25 and the units sit around 0.5 with shrinking spread: each layer squashes the
variation of its input, so the last hidden layer is nearly the same vector for every trial, and
the backward pass multiplies the gradient by <= 0.25 x |W| per layer, so the early layers
(the only ones that see the informative features) receive ~1e-4..1e-6 of the gradient. The output
stays at the base rate and the BCE sits at ~0.69 (a stall, no non-finite value); the same network
with normalised pre-activations learns.

ORIGIN: "body.1", the first Sigmoid: the gradient attenuation (and the first squashing of the
feature variation) starts at the first saturating unit and compounds with every later one.

Fix: BatchNorm1d before every hidden Sigmoid (the catalogue's normalisation fix: pre-activations
are re-centred and re-scaled so each sigmoid keeps working in its sensitive range); activation,
sigmoid output + BCE, init, data, lr and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "body.1"
SOURCE = ("Vanishing gradients through stacked logistic sigmoids (Hochreiter 1991; Glorot & Bengio "
          "2010, fig. 2 saturation of top hidden layers); deep sigmoid MLPs on DEAP band-power "
          "features in EEG emotion-recognition tutorials (Koelstra et al. 2012 dataset)")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_feat = 32 * 5
    width = [128, 96, 64][seed % 3]
    depth = [7, 9, 8][seed % 3]
    batch = [32, 64, 48][seed % 3]
    lr = [0.1, 0.15, 0.12][seed % 3]
    steps = 200

    layers, d = [], n_feat
    for _ in range(depth):
        if fixed:  # normalise pre-activations so every sigmoid works in its linear range
            layers += [nn.Linear(d, width), nn.BatchNorm1d(width), nn.Sigmoid()]
        else:
            layers += [nn.Linear(d, width), nn.Sigmoid()]
        d = width
    torch.manual_seed(seed)
    model = nn.Sequential()
    model.add_module("body", nn.Sequential(*layers))
    model.add_module("head", nn.Linear(d, 1))
    model.add_module("prob", nn.Sigmoid())

    # valence drives frontal alpha asymmetry and a few other bands; label noise ~10%
    w_true = torch.zeros(n_feat)
    idx = torch.randperm(n_feat, generator=g)[:24]
    w_true[idx] = torch.randn(24, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(batch, n_feat, generator=g)
        logit = 2.0 * (x @ w_true) / w_true.norm()
        y = (torch.rand(batch, generator=g) < torch.sigmoid(2 * logit)).float()[:, None]
        batches.append((x, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": nn.BCELoss(), "batches": batches,
            "steps": steps}
