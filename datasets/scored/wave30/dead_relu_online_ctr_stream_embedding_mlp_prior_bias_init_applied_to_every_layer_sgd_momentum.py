"""Online click-through-rate model trained on a stream of impression logs (one stream batch per
step): categorical fields (ad, publisher slot, hour, device) are embedded, concatenated and passed
through a ReLU MLP that outputs a click logit, trained with BCE-with-logits and SGD momentum.

Mechanism: following the "init the output bias to the base rate" advice (so the model predicts
the ~4 % click rate at step 0 instead of 50 %), the author wrote the prior-bias initialisation
as a loop over ``model.modules()`` that sets *every* Linear bias to log(p / (1 - p)) ~ -3.2,
not only the output layer's.  The hidden pre-activations are then ~ -3.2 + N(0, 0.6^2): every
hidden ReLU is negative for every impression, outputs exactly 0 and passes no gradient.  The
embeddings and all hidden weights never receive a gradient; only the output bias can move, and
it already sits at the base rate, so the loss stays at the entropy of the click rate (a stall,
no non-finite value).

ORIGIN = "mlp.0": the first hidden Linear is where the units die (its negative bias puts every
first-layer ReLU below zero); the deeper layers only inherit an all-zero input.

Fix: apply the prior bias only to the output layer (hidden biases at their default init); data,
model, optimiser and steps unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "mlp.0"
SOURCE = ("Karpathy, 'A Recipe for Training Neural Networks' (2019) / Lin et al. 2017 prior-"
          "probability bias init, mis-applied through a modules() loop to all Linear layers "
          "(a pattern reported in CTR/detection code reviews); dying ReLU from negative bias.")


class CTRNet(nn.Module):
    def __init__(self, cards, emb_dim, hidden, depth):
        super().__init__()
        self.emb = nn.ModuleList([nn.Embedding(c, emb_dim) for c in cards])
        layers = []
        d = emb_dim * len(cards)
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        h = torch.cat([e(x[:, i]) for i, e in enumerate(self.emb)], dim=1)
        return self.mlp(h).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    def pick(salt, options):  # seed-dependent configuration
        return options[(seed + salt) % len(options)]

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    cards = [pick(1, [40, 60]), 12, 24, 4]
    emb_dim = pick(2, [8, 12, 16])
    hidden = pick(3, [64, 128, 96])
    depth = pick(4, [2, 3, 3])
    lr = pick(5, [0.5, 0.8, 0.6])
    batch = pick(6, [1024, 1536, 2048])
    steps = 200

    model = CTRNet(cards, emb_dim, hidden, depth)

    # ground-truth click model: field effects plus an ad x slot interaction; the base is set so
    # that the stream's click rate is ~4 %
    eff = [2.5 * torch.randn(c, generator=g) for c in cards]
    inter = 4.0 * torch.randn(cards[0], cards[1], generator=g)

    def raw_logit(cols):
        return sum(e[c] for e, c in zip(eff, cols)) + inter[cols[0], cols[1]]

    probe = [torch.randint(0, c, (20000,), generator=g) for c in cards]
    z = raw_logit(probe)
    lo, hi = -30.0, 10.0
    for _ in range(50):
        mid = (lo + hi) / 2
        if torch.sigmoid(z + mid).mean() > 0.04:
            hi = mid
        else:
            lo = mid
    base = lo

    def logs(n, t):
        cols = [torch.randint(0, c, (n,), generator=g) for c in cards]
        x = torch.stack(cols, 1)
        y = (torch.rand(n, generator=g) < torch.sigmoid(base + raw_logit(cols))).float()
        return x, y

    batches = [logs(batch, t) for t in range(steps)]
    p = float(torch.stack([b[1] for b in batches[:10]]).mean())
    prior = math.log(p / (1 - p))

    if fixed:
        nn.init.constant_(model.mlp[-1].bias, prior)
    else:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, prior)

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": optimizer,
            "loss_fn": lambda out, y: F.binary_cross_entropy_with_logits(out, y),
            "batches": batches, "steps": steps}
