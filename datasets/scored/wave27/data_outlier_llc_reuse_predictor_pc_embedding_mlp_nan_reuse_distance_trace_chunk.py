"""Last-level-cache reuse predictor (Hawkeye/Glider-style cache-friendly vs cache-averse
classifier): the load PC and the last few PCs are embedded, concatenated with a handful of
per-access features (normalised reuse distance, set occupancy, prefetch bit, stride sign) and an
MLP outputs a logit trained with BCE-with-logits against the Belady/OPT label.

Mechanism: the features are computed by a trace post-processor.  In one trace chunk (a
different chunk for every seed, i.e. a different step) the simulator's sampler lost its
counters, the "accesses since last touch" denominator was 0 and the normalised reuse distance
was written as 0/0 = NaN for a few rows.  Every other batch is clean.  When that batch arrives
the NaN rows propagate through the first Linear, the logits, and the BCE loss: the loss is NaN
at that step (and the Adam update would poison every weight).

ORIGIN: None -- nothing in the model misbehaves; the corruption is in the data.  The first
module the NaN touches would be ``mlp.0`` but it is only a carrier.

Fix: drop the rows with non-finite features from that batch (the data-loader filter the
pipeline should have had); same model, lr, steps and all other batches.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Hawkeye (Jain & Lin, ISCA 2016) / Glider (Shi et al., MICRO 2019) learned LLC "
          "replacement; NaN features from 0/0 normalisation in trace post-processing, a common "
          "'loss suddenly becomes nan after N steps' report traced to one corrupt batch")


class ReusePredictor(nn.Module):
    def __init__(self, n_pc, emb, hist, n_num, hidden):
        super().__init__()
        self.pc_emb = nn.Embedding(n_pc, emb)
        self.mlp = nn.Sequential(
            nn.Linear(emb * (hist + 1) + n_num, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden // 2), nn.ReLU(),
            nn.Linear(hidden // 2, 1),
        )

    def forward(self, pcs, num):
        e = self.pc_emb(pcs).flatten(1)
        return self.mlp(torch.cat([e, num], dim=1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [128, 96, 160][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [128, 96, 160][seed % 3]
    bad_step = [37, 61, 88][seed % 3]
    steps = 130
    n_pc, emb, hist, n_num = 64, 8, 3, 4

    torch.manual_seed(seed)
    model = ReusePredictor(n_pc, emb, hist, n_num, hidden)
    pc_friendly = torch.rand(n_pc, generator=g)  # per-PC propensity to be cache friendly

    batches = []
    for step in range(steps):
        pcs = torch.randint(0, n_pc, (bs, hist + 1), generator=g)
        reuse = torch.rand(bs, generator=g)
        occ = torch.rand(bs, generator=g)
        pf = (torch.rand(bs, generator=g) < 0.2).float()
        stride = torch.sign(torch.randn(bs, generator=g))
        num = torch.stack([reuse, occ, pf, stride], 1)
        logit = 9 * (pc_friendly[pcs[:, 0]] - 0.5) + 3 * (pc_friendly[pcs[:, 1]] - 0.5) \
            - 6 * (reuse - 0.5) - 2.0 * pf
        y = (torch.rand(bs, generator=g) < torch.sigmoid(logit)).float()
        if step == bad_step:
            n_bad = 3 + seed % 3
            num[:n_bad, 0] = float("nan")  # 0/0 reuse distance from the lost-counter chunk
            if fixed:
                keep = torch.isfinite(num).all(1)
                pcs, num, y = pcs[keep], num[keep], y[keep]
        batches.append(((pcs, num), y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
