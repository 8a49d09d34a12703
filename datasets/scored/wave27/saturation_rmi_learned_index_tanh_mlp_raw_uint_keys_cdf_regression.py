"""Learned index (RMI, Kraska et al.): a small tanh MLP learns the CDF of the sorted key column,
i.e. it maps a key to its normalised position in the sorted array (in [0, 1]); lookups then
search a small error window around the predicted slot.  L1 loss on the position, Adam.

Mechanism: the model is fed the raw integer keys (ids / timestamps in the 1e5..1e8 range);
the position target is already in [0, 1], so the loss is small and looks harmless.  But the
first Linear turns the raw key into pre-activations of magnitude ~1e4..1e7: every tanh unit
of the first layer is at exactly +-1 (tanh' == 0 in float32), the hidden representation is the
same sign pattern for almost every key, and no gradient reaches the first layer.  The rest of
the network can only output a (nearly) constant position, and the L1 loss stays at its
initial ~0.25 plateau.  No NaN.

ORIGIN: ``mlp.0`` -- the first Linear produces the huge pre-activations that saturate the tanh
units right after it.

Fix: min-max scale the keys to [0, 1] before the model (as the RMI paper does), which brings the
pre-activations back to O(1); same model, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "mlp.0"
SOURCE = ("Kraska et al., 'The Case for Learned Index Structures', SIGMOD 2018 (RMI stage models); "
          "tanh saturation from un-normalised inputs (LeCun et al., 'Efficient BackProp' 1998)")


class CDFModel(nn.Module):
    def __init__(self, hidden, depth):
        super().__init__()
        layers, d = [], 1
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.Tanh()]
            d = hidden
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, k):
        return self.mlp(k.unsqueeze(-1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [5e-3, 3e-3, 4e-3][seed % 3]
    bs = [128, 256, 192][seed % 3]
    steps = 200
    key_max = [1e6, 5e7, 2e5][seed % 3]

    torch.manual_seed(seed)
    model = CDFModel(hidden, depth)
    # a skewed key column: lognormal-ish clusters of ids, sorted; position = rank / n
    n_keys = 20000
    mix = torch.cat([torch.rand(n_keys // 2, generator=g) ** 3,
                     0.6 + 0.1 * torch.rand(n_keys // 2, generator=g)])
    keys = torch.sort(torch.floor(mix * key_max)).values
    pos = torch.arange(n_keys, dtype=torch.float32) / (n_keys - 1)
    k_min, k_max = float(keys.min()), float(keys.max())
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_keys, (bs,), generator=g)
        k = keys[idx]
        if fixed:
            k = (k - k_min) / (k_max - k_min)
        batches.append((k, pos[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
