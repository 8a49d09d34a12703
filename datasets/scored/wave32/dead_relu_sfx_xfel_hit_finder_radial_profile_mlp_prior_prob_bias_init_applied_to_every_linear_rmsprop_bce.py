"""Serial femtosecond crystallography (XFEL) hit finder: a ReLU MLP reads the standardised
radial intensity profile of each detector frame and classifies "crystal hit" vs "miss"
(BCEWithLogits, RMSprop). Hits are rare (~5 %), so the author uses the RetinaNet "prior
probability" initialisation b = -log((1 - pi) / pi) with pi = hit rate so the initial loss
starts at the base-rate entropy - but the init loop sets that bias on EVERY nn.Linear, not only
on the classifier.

Mechanism: the hidden pre-activations are w.x + b with default-init w.x of std ~0.6 and
b ~ -2.9, i.e. about 5 sigma below zero: every hidden ReLU outputs 0 for every frame from step
0, so no gradient reaches any hidden weight (dead units from initialisation). Only the output
bias learns, which can do no better than the base rate, and the loss sits at the base-rate
entropy for the whole run.

ORIGIN: "mlp.1", the first hidden ReLU: its units are dead from step 0 and block all gradient to
the layers before it (the deeper ReLUs are dead too, but the signal stops here first).
Fix: apply the prior-probability bias only to the classifier ("mlp.<last>") and keep zero
biases on the hidden layers (the init the recipe intends).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("Lin et al. 2017 (RetinaNet) prior-probability bias init meant for the final "
          "classifier only; dead ReLUs from negative bias (CS231n); SFX hit finding with "
          "neural networks (Ke et al. 2018, J. Synchrotron Rad.)")

N_BINS = 64


def _frames(g, bs, hit_rate):
    r = torch.linspace(0, 1, N_BINS)
    y = torch.zeros(bs)                       # stratified batches: a fixed share of hits
    y[torch.randperm(bs, generator=g)[: round(bs * hit_rate)]] = 1.0
    water = 1.5 * torch.exp(-((r - 0.35) / 0.08) ** 2)
    bg = (2.0 * torch.exp(-r / 0.3))[None, :] * (0.8 + 0.4 * torch.rand(bs, 1, generator=g))
    prof = bg + water * (0.5 + torch.rand(bs, 1, generator=g))
    # Bragg peaks: a few sharp rings at random radii (hits only), more at high resolution
    n_pk = 6
    pk_r = 0.2 + 0.75 * torch.rand(bs, n_pk, generator=g)
    pk_a = 0.6 * torch.rand(bs, n_pk, generator=g)
    peaks = (pk_a[:, :, None] * torch.exp(-((r - pk_r[:, :, None]) / 0.01) ** 2)).sum(1)
    prof = prof + y[:, None] * (peaks + 0.25 * r)
    prof = prof + 0.1 * torch.randn(bs, N_BINS, generator=g)
    x = (prof - 0.8) / 0.6
    return x, y[:, None]


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(700 + seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 2, 3][seed % 3]
    bs = [60, 80, 100][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    hit_rate = 0.05
    steps = 200
    layers, d = [], N_BINS
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    model = nn.Sequential()
    model.add_module("mlp", nn.Sequential(*layers))
    prior_bias = -math.log((1 - hit_rate) / hit_rate)
    classifier = model.mlp[-1]
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed and m is not classifier:
                nn.init.zeros_(m.bias)
            else:
                nn.init.constant_(m.bias, prior_bias)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    batches = [_frames(g, bs, hit_rate) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
