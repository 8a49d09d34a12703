"""Resume -> occupation-code (SOC major group) classifier: L2-normalised TF-IDF vector of the
resume's skills/titles -> Linear -> ReLU -> Linear -> ReLU -> Linear -> softmax CE, Adam.

Mechanism: the learning rate (0.15-0.25) was carried over from the team's logistic-regression
baseline on the same TF-IDF features, where it was fine. TF-IDF inputs are all non-negative,
so for each hidden unit the gradient of every incoming weight has the SAME sign
(dL/dW_ij = delta_i * x_j with x_j >= 0), and Adam's first steps move every weight of a unit
by ~lr in that common direction. Units that receive a positive delta in the first few steps
get all their weights (and bias) pushed down by ~0.1-0.5 while the weights start at ~0.03, so
their pre-activation becomes negative for every (non-negative) resume vector: the units are
dead, get zero gradient forever, and the hidden layers end up with almost no live units. The
loss plateaus near the class-prior entropy instead of falling.

ORIGIN: "mlp.1", the first ReLU: the first layer whose units die (the second ReLU then sees
an all-zero input and dies with it).

Fix: a learning rate suited to the MLP (2e-3); same model, data, steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("Dying-ReLU with non-negative (TF-IDF / bag-of-words) inputs and a learning rate "
          "reused from a linear model (CS231n 'dead ReLU' notes; Lu et al. 2019 'Dying ReLU "
          "and initialization'); resume-to-O*NET/SOC occupation coding baselines")


class OccupationCoder(nn.Module):
    def __init__(self, vocab, hid, n_cls):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(vocab, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(),
                                 nn.Linear(hid, n_cls))

    def forward(self, x):
        return self.mlp(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    vocab, n_cls, steps = 800, 10, 150
    hid = [128, 96, 160][seed % 3]
    bs = [64, 96, 80][seed % 3]
    lr = 2e-3 if fixed else [0.2, 0.15, 0.25][seed % 3]
    torch.manual_seed(seed)
    model = OccupationCoder(vocab, hid, n_cls)
    # each occupation group has a pool of characteristic terms, plus shared generic terms
    pools = torch.randint(0, vocab, (n_cls, 120), generator=g)
    idf = 1.0 + 3.0 * torch.rand(vocab, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        tf = torch.zeros(bs, vocab)
        spec = pools[y][torch.arange(bs)[:, None], torch.randint(0, 120, (bs, 6), generator=g)]
        gen = torch.randint(0, vocab, (bs, 40), generator=g)
        tf.scatter_add_(1, spec, torch.ones(bs, 6))
        tf.scatter_add_(1, gen, torch.ones(bs, 40))
        x = torch.log1p(tf) * idf
        x = x / x.norm(dim=1, keepdim=True)
        batches.append((x, y))             # sublinear-tf, l2-normalised TF-IDF rows
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
