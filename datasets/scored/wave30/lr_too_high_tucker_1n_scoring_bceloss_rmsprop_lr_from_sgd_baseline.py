"""TuckER link prediction (Balazevic et al. 2019) with 1-N scoring on a synthetic KG.

Model: entity and relation embeddings, a shared core tensor W (d_r x d_e x d_e). For a query
(h, r) the relation contracts the core to a d_e x d_e matrix, the (batch-normalised) head
embedding is multiplied through it, and the result is scored against every entity; sigmoid then
nn.BCELoss against label-smoothed multi-hot tail vectors, as in the reference code.

Mechanism: the reference trains with Adam at lr 0.0005-0.003. Here the optimiser was swapped
to RMSprop and the lr copied from the plain-SGD baseline of the same codebase (0.25-0.4 by
seed). RMSprop's first step divides by a tiny running square (no bias correction), so every
parameter moves by roughly lr / sqrt(1 - alpha) ~ 10 x lr, and afterwards keeps jumping by ~lr
per step: update/weight ratios of order 0.1-1, far above ~1e-3. The trilinear score multiplies
three overshooting factors, the logits swing to large magnitudes with the wrong signs, and the
BCE loss jumps from ~0.7 to ~8-10 after the first step and bounces there for the rest of the
run: a stall without any non-finite value.

ORIGIN: None -- the learning rate is an optimiser setting; every parameter group (embeddings and
the core tensor) overshoots at once, no single module starts it.

Fix: lr = 0.001 (same RMSprop, model, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("TuckER reference implementation (ibalazevic/TuckER, Adam lr 5e-4..3e-3, BCELoss with "
          "label smoothing); the known pattern of copying an Adam-grid learning rate to RMSprop "
          "and getting an oscillating, non-decreasing loss")


class TuckER(nn.Module):
    def __init__(self, n_ent, n_rel, de, dr):
        super().__init__()
        self.E = nn.Embedding(n_ent, de)
        self.R = nn.Embedding(n_rel, dr)
        self.W = nn.Parameter(torch.empty(dr, de, de).uniform_(-1, 1))
        self.bn0 = nn.BatchNorm1d(de)
        self.bn1 = nn.BatchNorm1d(de)
        nn.init.xavier_normal_(self.E.weight)
        nn.init.xavier_normal_(self.R.weight)

    def forward(self, h, r):
        de = self.E.weight.shape[1]
        x = self.bn0(self.E(h)).unsqueeze(1)                      # B x 1 x de
        Wr = (self.R(r) @ self.W.view(self.W.shape[0], -1)).view(-1, de, de)
        x = torch.bmm(x, Wr).squeeze(1)
        x = self.bn1(x)
        return torch.sigmoid(x @ self.E.weight.t())


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_ent = [240, 300, 200][seed % 3]
    n_rel = [8, 10, 12][seed % 3]
    de = [32, 40, 24][seed % 3]
    dr = [16, 20, 12][seed % 3]
    batch = [64, 48, 80][seed % 3]
    steps = [120, 140, 100][seed % 3]
    lr = 0.001 if fixed else [0.3, 0.25, 0.4][seed % 3]
    smoothing = 0.1

    # latent clusters: relation r sends cluster c to cluster perm_r[c]; tails = that cluster
    n_clu = 12
    clu = torch.randint(0, n_clu, (n_ent,), generator=g)
    perm = torch.stack([torch.randperm(n_clu, generator=g) for _ in range(n_rel)])
    batches = []
    for _ in range(steps):
        h = torch.randint(0, n_ent, (batch,), generator=g)
        r = torch.randint(0, n_rel, (batch,), generator=g)
        tgt_c = perm[r, clu[h]]
        y = (clu.unsqueeze(0) == tgt_c.unsqueeze(1)).float()
        y = (1.0 - smoothing) * y + 1.0 / n_ent
        batches.append(((h, r), y))

    model = TuckER(n_ent, n_rel, de, dr)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(), batches=batches, steps=steps)
