"""Traffic-signal phase policy learned by imitation of a max-pressure controller: at each
decision point of a 4-arm intersection the 12 movements (L/T/R per approach) are tokens with
features (standardised upstream queue, downstream queue, arrival flow, time since last
green) plus movement-id embeddings; a post-LN Transformer encoder mixes them and a head
(RL-style orthogonal init, gain 0.01, so the initial policy is uniform) scores the 8
NEMA-style phase pairs; cross-entropy against the phase the max-pressure
controller picked (the phase with the largest summed upstream-minus-downstream pressure);
AdamW, no warmup.

Mechanism: lr 5e-2 to 1e-1 with no warmup, copied from the SGD config of the team's
previous MLP policy when the optimiser was switched to AdamW; for a post-LN Transformer under
Adam that is ~100x too high. Adam moves every weight by ~lr per step from
step 0, the attention logits and LayerNorm gains get thrown around, attention collapses and
the network flips between confidently predicting one or two phases; the cross-entropy
hovers at or above ln 8 for the whole run instead of going down -- a stall, no NaN.
Update/weight ratios are ~1e-2-1e-1 throughout.

ORIGIN = None: an optimiser hyper-parameter; every module takes oversized steps, none is
where it starts.

Fix: lr = 5e-4 (same AdamW and no warmup; model, data and steps unchanged).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Varaiya 2013 max-pressure signal control; imitation-learned signal policies "
          "(e.g. attention over movements as in FRAP/CoLight/PressLight lineage); Xiong et "
          "al. 2020 'On Layer Normalization in the Transformer Architecture': post-LN "
          "Transformers fail to train at large lr without warmup")

# 8 phases as pairs of the 12 movements (approach*3 + {0:L,1:T,2:R}); right turns always on
PHASES = [(1, 7), (0, 6), (4, 10), (3, 9), (0, 1), (6, 7), (3, 4), (9, 10)]


def _states(g, n):
    up = torch.rand(n, 12, generator=g) * 30 * torch.rand(n, 1, generator=g) ** 0.5
    down = torch.rand(n, 12, generator=g) * 15
    flow = up / 30 + 0.2 * torch.rand(n, 12, generator=g)
    since = torch.rand(n, 12, generator=g)
    pressure = up - down
    score = torch.stack([pressure[:, a] + pressure[:, b] for a, b in PHASES], 1)
    y = score.argmax(1)
    feats = torch.stack([(up - 10) / 8, (down - 7.5) / 4.3, (flow - 0.3) / 0.25, (since - 0.5) / 0.29], 2)
    return feats, y


class PhasePolicy(nn.Module):
    def __init__(self, d_model, nhead, layers):
        super().__init__()
        self.inp = nn.Linear(4, d_model)
        self.mov = nn.Embedding(12, d_model)
        enc = nn.TransformerEncoderLayer(d_model, nhead, 2 * d_model, dropout=0.0,
                                         batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(enc, layers, enable_nested_tensor=False)
        self.head = nn.Linear(12 * d_model, len(PHASES))
        self.register_buffer("ids", torch.arange(12))
        nn.init.orthogonal_(self.head.weight, gain=0.01)   # RL-style policy-head init
        nn.init.zeros_(self.head.bias)

    def forward(self, x):
        h = self.encoder(self.inp(x) + self.mov(self.ids))
        return self.head(h.flatten(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(8000 + seed)
    d_model = [32, 48, 64][seed % 3]
    nhead = [4, 4, 8][seed % 3]
    layers = [2, 3, 2][seed % 3]
    bs = [64, 48, 80][seed % 3]
    lr_bad = [5e-2, 6e-2, 1e-1][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = PhasePolicy(d_model, nhead, layers)
    x, y = _states(g, steps * bs)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4 if fixed else lr_bad, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
