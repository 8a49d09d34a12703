"""Learned cardinality estimator (MSCN, Kipf et al.): a query is three sets -- tables, joins,
predicates -- each element goes through its own MLP, each set is average-pooled with a padding
mask (``(h * mask).sum(1) / mask.sum(1)``), the three pooled vectors are concatenated and an
output MLP regresses the normalised log cardinality (MSE, Adam).

Mechanism: the training workload is streamed in generation order: first the multi-table join
queries, then (from a seed-dependent step on) a block that also contains single-table queries.
A single-table query has an *empty* join set, so its join mask sums to 0 and the masked mean
is 0/0 = NaN.  The run is calm until the first such query arrives; then the forward pass gives
NaN and the loss is NaN.

ORIGIN: ``join_pool`` -- the masked-mean pooling of the join set is the op that divides 0 by 0.

Fix: ``mask.sum(1).clamp_min(1)`` in the denominator (an empty set pools to the zero vector);
same model, data, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "join_pool"
SOURCE = ("MSCN (Kipf et al., 'Learned Cardinalities', CIDR 2019) masked average pooling over "
          "table/join/predicate sets; division by an all-zero mask for queries without joins "
          "(reported when re-implementing MSCN on workloads with single-table queries)")


class MaskedMean(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.safe = safe

    def forward(self, h, mask):
        denom = mask.sum(1)
        if self.safe:
            denom = denom.clamp_min(1.0)
        return (h * mask).sum(1) / denom


class MSCN(nn.Module):
    def __init__(self, d_t, d_j, d_p, hidden, safe):
        super().__init__()
        self.table_mlp = nn.Sequential(nn.Linear(d_t, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.join_mlp = nn.Sequential(nn.Linear(d_j, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.pred_mlp = nn.Sequential(nn.Linear(d_p, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.table_pool = MaskedMean(safe)
        self.join_pool = MaskedMean(safe)
        self.pred_pool = MaskedMean(safe)
        self.out = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, t, tm, j, jm, p, pm):
        ht = self.table_pool(self.table_mlp(t), tm)
        hj = self.join_pool(self.join_mlp(j), jm)
        hp = self.pred_pool(self.pred_mlp(p), pm)
        return self.out(torch.cat([ht, hj, hp], 1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 96, 128][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    bs = [64, 48, 80][seed % 3]
    single_from = [45, 70, 95][seed % 3]
    steps = 130
    n_tab, n_join, n_col = 6, 8, 12
    d_t, d_j, d_p = n_tab + 1, n_join, n_col + 3 + 1
    max_t, max_j, max_p = 4, 3, 5

    torch.manual_seed(seed)
    model = MSCN(d_t, d_j, d_p, hidden, safe=fixed)
    log_size = torch.rand(n_tab, generator=g) * 4 + 2
    batches = []
    for step in range(steps):
        nt = torch.randint(2, max_t + 1, (bs,), generator=g)
        if step >= single_from:  # block of the workload that also has single-table queries
            single = torch.rand(bs, generator=g) < 0.15
            nt = torch.where(single, torch.ones_like(nt), nt)
        nj = (nt - 1).clamp(max=max_j)
        npred = torch.randint(1, max_p + 1, (bs,), generator=g)
        tabs = torch.randint(0, n_tab, (bs, max_t), generator=g)
        t = torch.zeros(bs, max_t, d_t)
        t.scatter_(2, tabs.unsqueeze(-1), 1.0)
        t[..., -1] = torch.rand(bs, max_t, generator=g)  # sample bitmap fraction
        tm = (torch.arange(max_t).unsqueeze(0) < nt.unsqueeze(1)).float().unsqueeze(-1)
        j = torch.zeros(bs, max_j, d_j)
        j.scatter_(2, torch.randint(0, n_join, (bs, max_j, 1), generator=g), 1.0)
        jm = (torch.arange(max_j).unsqueeze(0) < nj.unsqueeze(1)).float().unsqueeze(-1)
        cols = torch.randint(0, n_col, (bs, max_p), generator=g)
        p = torch.zeros(bs, max_p, d_p)
        p.scatter_(2, cols.unsqueeze(-1), 1.0)
        p[..., n_col:n_col + 3] = torch.nn.functional.one_hot(torch.randint(0, 3, (bs, max_p), generator=g), 3).float()
        val = torch.rand(bs, max_p, generator=g)
        p[..., -1] = val
        pm = (torch.arange(max_p).unsqueeze(0) < npred.unsqueeze(1)).float().unsqueeze(-1)
        log_card = (log_size[tabs] * tm.squeeze(-1)).sum(1) - 0.8 * nj.float() \
            + (torch.log(val + 0.05) * pm.squeeze(-1)).sum(1)
        y = (log_card - 8.0) / 4.0
        batches.append(((t, tm, j, jm, p, pm), y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
