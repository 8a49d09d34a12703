"""Multilevel-regression-and-poststratification (MRP) with a neural first stage: each survey
respondent is described by embeddings of state, age group, education, race/ethnicity and
gender (the poststratification cell) plus standardised state-level predictors (previous
Republican vote share, religiosity); the summed embeddings and predictors go through a ReLU
MLP (no normalisation) to the logit of supporting a policy; BCE-with-logits, SGD with heavy-ball
momentum 0.9.

Mechanism (dead_relu). The learning rate was set with the linear scaling rule from a base of
0.1 per 16 respondents, so the big cell-stratified batches (192-320) get lr 1.2-2.0. Without
BatchNorm, the momentum steps keep overshooting: the loss spikes, the errors of a whole batch
share a sign, and momentum keeps pushing the biases and weights of the hidden units the same
way for several steps. At one of these spikes (early or mid-run, depending on the seed) the
last hidden layer's pre-activations end up negative for every poststratification cell: those
units output 0 and get exactly zero gradient, so nothing can revive them; the output bias
alone learns the national support rate and the loss returns to about log 2 for the rest of the
run.

ORIGIN = "top_act": the last hidden ReLU (feeding the output layer). It receives the largest
back-propagated errors and is the layer that goes fully dead; earlier layers keep some live
units but nothing passes the dead top layer.

Fix: the learning rate suited to an un-normalised MLP (0.1, no linear scaling); same momentum,
data, model, batches and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "top_act"
SOURCE = ("MRP (Gelman & Little 1997; Park, Gelman & Bafumi 2004) with neural first stages "
          "(Ornstein 2020 'Stacked regression and poststratification'); linear lr scaling rule "
          "(Goyal et al. 2017) applied without BatchNorm -> dying ReLU (Lu et al. 2019)")

CARD = dict(state=50, age=6, edu=5, race=4, sex=2)


class NeuralMRP(nn.Module):
    def __init__(self, d_emb, d_state, width, depth):
        super().__init__()
        self.emb = nn.ModuleDict({k: nn.Embedding(n, d_emb) for k, n in CARD.items()})
        layers, d = [], d_emb + d_state
        for _ in range(depth - 1):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.mlp = nn.Sequential(*layers)
        self.top = nn.Linear(d, width)
        self.top_act = nn.ReLU()
        self.out = nn.Linear(width, 1)

    def forward(self, cells, zstate):
        e = sum(self.emb[k](cells[:, i]) for i, k in enumerate(CARD))
        h = self.mlp(torch.cat([e, zstate], 1))
        return self.out(self.top_act(self.top(h))).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d_emb = [8, 12, 16][seed % 3]
    width = [32, 48, 64][seed % 3]
    depth = [2, 2, 3][seed % 3]
    bs = [256, 192, 320][seed % 3]
    lr = 0.1 * bs / 16                           # linear scaling rule: 1.2-2.0
    steps = 150

    eff = {k: torch.randn(n, generator=g) * 1.0 for k, n in CARD.items()}
    state_x = torch.randn(CARD["state"], 2, generator=g)
    inter = torch.randn(CARD["edu"], CARD["race"], generator=g) * 0.8

    model = NeuralMRP(d_emb, 2, width, depth)

    def sample(n):
        cells = torch.stack([torch.randint(0, c, (n,), generator=g) for c in CARD.values()], 1)
        z = state_x[cells[:, 0]]
        logit = sum(eff[k][cells[:, i]] for i, k in enumerate(CARD)) + 0.8 * z[:, 0] \
            + inter[cells[:, 2], cells[:, 3]]
        logit = logit - logit.mean()
        y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
        return (cells, z), y

    batches = [sample(bs) for _ in range(steps)]
    if fixed:
        lr = 0.1
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
