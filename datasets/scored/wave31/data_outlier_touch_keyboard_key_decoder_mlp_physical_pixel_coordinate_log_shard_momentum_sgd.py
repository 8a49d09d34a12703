"""Soft-keyboard touch decoder: an MLP maps one touch event (x, y normalised to the keyboard
rectangle and then standardised, touch major/minor axes, pressure) plus the previously committed
key (one-hot) to the intended key (30 classes: letters and punctuation), cross-entropy, momentum
SGD. Training data are touch logs aggregated from many devices.

Mechanism: in one logging shard (one batch, whose position varies with the seed) about a third
of the rows come from a client build that wrote MotionEvent coordinates in physical pixels
(0..1440 x 0..900) instead of normalising them to [0, 1]. After the pipeline's fixed
standardisation those rows have x/y features in the thousands instead of ~+-2: on that step the
first-layer pre-activations and the cross-entropy gradient w.r.t. the x/y weight columns are
thousands of times larger than usual, and momentum carries the oversized update into the next
SGD steps. Afterwards almost every unit of the last hidden ReLU layer is negative for every
normal touch (dead) and the network cannot route signal around them. The model never recovers:
the loss stays near its initial level for the rest of training (a stall, the loss stays finite).

ORIGIN: "encoder.0", the first Linear, is the first layer the corrupt coordinates hit and the one
whose x/y weight columns receive the oversized update.

Fix: validate the log shard: rows whose normalised coordinates fall outside the keyboard
rectangle (with a small margin) are dropped before batching; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "encoder.0"
SOURCE = ("Touch-model training on aggregated device logs (Gboard / Weir et al. CHI 2012 'Learning "
          "to correct touch offsets'); mixed-unit telemetry (px vs normalised) is a common "
          "corrupt-shard pattern; one corrupt batch + momentum SGD ruining a run")

N_KEYS = 30


def _key_centres():
    rows = [10, 10, 10]
    cs = []
    for r, n in enumerate(rows):
        for c in range(n):
            cs.append(((c + 0.5 + 0.3 * r) / 10.6, (r + 0.5) / 3.0))
    return torch.tensor(cs)


class KeyDecoder(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers, d = [], 5 + N_KEYS
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.encoder = nn.Sequential(*layers)
        self.out = nn.Linear(d, N_KEYS)

    def forward(self, x):
        return self.out(self.encoder(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 96, 128][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.1, 0.05, 0.08][seed % 3]
    bs = [64, 96, 80][seed % 3]
    bad_step = [25, 40, 55][seed % 3]
    steps = 200
    centres = _key_centres()
    # bigram structure: each previous key favours a few next keys
    trans = torch.rand(N_KEYS, N_KEYS, generator=g) ** 3 + 0.02
    trans = trans / trans.sum(1, keepdim=True)
    batches = []
    for s in range(steps):
        prev = torch.randint(0, N_KEYS, (bs,), generator=g)
        key = torch.multinomial(trans[prev], 1, generator=g).squeeze(1)
        # users hit slightly below and right of the key centre, with spread ~ half a key
        xy = centres[key] + torch.tensor([0.01, 0.04]) + torch.randn(bs, 2, generator=g) * torch.tensor([0.045, 0.13])
        axes = 0.3 + 0.05 * torch.randn(bs, 2, generator=g)
        pressure = 0.5 + 0.1 * torch.randn(bs, 1, generator=g)
        if s == bad_step:
            # rows from the client build that logged physical pixels
            bad = torch.rand(bs, generator=g) < 0.35
            xy[bad] = xy[bad] * torch.tensor([1440.0, 900.0])
            if fixed:  # shard validation: coordinates must lie on the keyboard (+ margin)
                ok = ((xy > -0.25) & (xy < 1.25)).all(1)
                xy, axes, pressure, prev, key = xy[ok], axes[ok], pressure[ok], prev[ok], key[ok]
        # the pipeline standardises with fixed keyboard statistics
        xy_n = (xy - 0.5) / 0.29
        feats = torch.cat([xy_n, (axes - 0.3) / 0.05, (pressure - 0.5) / 0.1,
                           nn.functional.one_hot(prev, N_KEYS).float()], 1)
        batches.append((feats, key))
    torch.manual_seed(seed)
    model = KeyDecoder(width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps}
