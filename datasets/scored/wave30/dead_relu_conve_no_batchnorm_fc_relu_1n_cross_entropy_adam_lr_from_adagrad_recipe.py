"""ConvE (Dettmers et al. 2018) 1-N link prediction on a synthetic clustered KG.

Model: head and relation embeddings are reshaped to 2-D, stacked, convolved (3x3 filters),
ReLU, flattened, projected by a fully connected layer `fc` back to the embedding size, ReLU
(`fc_act`), and scored against every entity embedding. Loss: cross-entropy over all entities
for the observed tail (the 1-N "KvsAll with softmax" variant).

Mechanism: the batch-norm layers of the reference model were dropped and the learning rate was
copied from the Adagrad DistMult recipe of the same codebase (Adam 0.1-0.2 instead of ConvE's
0.003-0.01). The first Adam steps move every weight and bias of `fc` by ~lr; with no batch norm
to re-centre the pre-activations, the projection is pushed negative for every query, `fc_act`
outputs exactly zero for all units and all inputs, and no gradient reaches `fc`, the
convolution or the embeddings again. The scores are then all zero and the loss sits at
log(n_entities) for the rest of the run (a stall, no NaN). With a sane lr the ReLU units stay
alive and the loss falls towards log(cluster size).

ORIGIN: `fc_act` -- the ReLU after the projection is where the units die; everything upstream
stops receiving gradient because of it.

Fix: Adam lr 0.01 (same model without batch norm, same data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "fc_act"
SOURCE = ("ConvE (TimDettmers/ConvE, Adam lr 0.003, batch norm around the conv and fc); reports "
          "of ConvE/ConvKB ports without batch norm whose scores collapse to a constant and "
          "whose loss freezes at log(num_entities) once trained with a larger learning rate")


class ConvE(nn.Module):
    def __init__(self, n_ent, n_rel, d1, d2, n_filt):
        super().__init__()
        self.d1, self.d2 = d1, d2
        d = d1 * d2
        self.E = nn.Embedding(n_ent, d)
        self.R = nn.Embedding(n_rel, d)
        self.conv = nn.Conv2d(1, n_filt, 3)
        self.conv_act = nn.ReLU()
        self.fc = nn.Linear(n_filt * (2 * d1 - 2) * (d2 - 2), d)
        self.fc_act = nn.ReLU()
        nn.init.xavier_normal_(self.E.weight)
        nn.init.xavier_normal_(self.R.weight)

    def forward(self, h, r):
        eh = self.E(h).view(-1, 1, self.d1, self.d2)
        er = self.R(r).view(-1, 1, self.d1, self.d2)
        x = torch.cat([eh, er], dim=2)
        x = self.conv_act(self.conv(x)).flatten(1)
        x = self.fc_act(self.fc(x))
        return x @ self.E.weight.t()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_ent = [100, 120, 90][seed % 3]
    n_rel = [6, 6, 5][seed % 3]
    d1, d2 = [(4, 8), (5, 8), (4, 10)][seed % 3]
    n_filt = [16, 24, 20][seed % 3]
    batch = [64, 72, 80][seed % 3]
    steps = [200, 220, 180][seed % 3]
    lr = 0.01 if fixed else [0.1, 0.15, 0.2][seed % 3]

    n_clu = 10
    clu = torch.randint(0, n_clu, (n_ent,), generator=g)
    perm = torch.stack([torch.randperm(n_clu, generator=g) for _ in range(n_rel)])
    batches = []
    for _ in range(steps):
        h = torch.randint(0, n_ent, (batch,), generator=g)
        r = torch.randint(0, n_rel, (batch,), generator=g)
        # one observed tail per query, drawn uniformly from the target cluster
        member = (clu.unsqueeze(0) == perm[r, clu[h]].unsqueeze(1)).float()
        y = torch.multinomial(member, 1, generator=g).squeeze(1)
        batches.append(((h, r), y))

    model = ConvE(n_ent, n_rel, d1, d2, n_filt)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
