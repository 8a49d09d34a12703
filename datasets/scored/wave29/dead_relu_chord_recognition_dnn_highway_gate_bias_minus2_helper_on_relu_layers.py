"""Frame-level chord-recognition DNN whose ReLU layers got the highway carry-gate bias (-2).

Mechanism: a chord recogniser (context-stacked chroma frames -> 3-4 ReLU Linear layers ->
log-softmax over 24 major/minor chords, NLL loss, RMSprop) is initialised with the team's shared
``init_weights`` helper, written for their highway-network models: Xavier weights and every
Linear bias set to -2 so that highway *transform gates* start closed (Srivastava et al.).  Here
there are no gates -- the -2 lands on plain ReLU layers.  With unit-variance chroma inputs the
first layer's pre-activations have std ~0.6-0.8, so bias -2 leaves only a minority of units positive,
and only on a few frames; the second layer's input is then almost all zeros, its pre-activations are ~-2
everywhere, and every unit of it is dead from step 0.  Dead ReLUs pass no gradient, so nothing
before the classifier ever learns, the output layer sees constant zeros, and the NLL sits at
log(24) -- a stall with no non-finite value.

ORIGIN: ``layers.3`` -- the second ReLU is the first layer that is dead for every input (the
first ReLU keeps a minority of units alive on some frames because its inputs are zero-mean and
varied); it is where the gradient stops, so nothing before it learns and the layers after it
only ever see zeros.

Fix: zero biases for the ReLU layers (keep the Xavier weights), i.e. the helper is not applied
to non-gate Linear layers.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "layers.3"
SOURCE = ("Srivastava et al. 2015, 'Training very deep networks' (transform-gate bias -1..-3) -- "
          "a gate-bias init helper applied to every Linear; DNN chord recognition on context-"
          "stacked chroma (Korzeniowski & Widmer 2016)")


class ChordDNN(nn.Module):
    def __init__(self, n_in, width, depth, n_chords):
        super().__init__()
        mods, d = [], n_in
        for _ in range(depth):
            mods += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.layers = nn.Sequential(*mods)
        self.out = nn.Linear(d, n_chords)

    def forward(self, x):
        return F.log_softmax(self.out(self.layers(x)), -1)


def init_weights(model, gate_bias=-2.0):
    """Shared helper from the highway-net code base."""
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.constant_(m.bias, gate_bias)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(7000 + seed)
    depth = [3, 4, 3][seed % 3]
    width = [256, 128, 192][seed % 3]
    bs = [64, 48, 32][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    ctx, n_chords, steps = 7, 24, 150

    # chord templates on 12 chroma bins (root, third, fifth), with harmonics bleeding
    tmpl = torch.zeros(n_chords, 12)
    for c in range(n_chords):
        root, minor = c % 12, c >= 12
        for iv, a in ((0, 1.0), (3 if minor else 4, 0.8), (7, 0.9), (10, 0.2)):
            tmpl[c, (root + iv) % 12] += a
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_chords, (bs,), generator=g)
        frames = tmpl[y].unsqueeze(1) * (0.6 + 0.8 * torch.rand(bs, ctx, 1, generator=g))
        frames = frames + 0.35 * torch.randn(bs, ctx, 12, generator=g)
        x = ((frames - 0.25) / 0.45).flatten(1)              # global mean/var normalisation
        batches.append((x, y))

    torch.manual_seed(seed)
    model = ChordDNN(ctx * 12, width, depth, n_chords)
    init_weights(model)
    if fixed:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.NLLLoss(), batches=batches, steps=steps)
