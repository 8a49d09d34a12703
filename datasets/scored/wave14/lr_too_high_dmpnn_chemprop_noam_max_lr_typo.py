"""Chemprop-style directed message-passing neural network (D-MPNN, Yang et al. 2019) for
molecular property regression, trained with Adam under Chemprop's Noam schedule
(linear warmup init_lr -> max_lr, then exponential decay to final_lr) -- with ``max_lr``
mistyped in the config: exponent -1 instead of -3 (3e-1 for 3e-3, 1e0 for 1e-2).

Mechanism
---------
During warmup the lr ramps linearly from init_lr=1e-4 towards max_lr.  With the typo the lr
passes 1e-2 after one or two steps and keeps growing to 0.3-1.0; Adam's normalised steps
then move every weight by ~lr per step, i.e. update/weight ratios of 0.1-1 instead of
~1e-3.  The bond-message ReLUs and the FFN ReLUs are knocked into the dead region, the
readout collapses to a (badly placed) constant and the MSE ends at or above the target
variance (~1) it started from, while the same schedule with the intended peak lr fits the
property to 0.05-0.15.  The exponential decay comes far too late to recover.

ORIGIN
------
None: the failure is the global step size (the schedule's peak lr), not one layer.

Fix
---
The intended ``max_lr`` (3e-3 / 1e-2); init_lr, final_lr, warmup length, model and batches
unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("chemprop D-MPNN (Yang et al., JCIM 2019) with its NoamLR warmup/decay schedule; "
          "max_lr exponent typo in a hyperparameter config")

N_ATOM_TYPES, N_BOND_TYPES = 6, 3


def _molecule(g):
    n = int(torch.randint(6, 15, (1,), generator=g))
    types = torch.multinomial(torch.tensor([0.6, 0.15, 0.12, 0.05, 0.05, 0.03]), n,
                              replacement=True, generator=g)
    edges = []
    for v in range(1, n):                                    # random spanning tree
        u = int(torch.randint(0, v, (1,), generator=g))
        edges.append((u, v))
    n_rings = int(torch.randint(0, 3, (1,), generator=g))
    for _ in range(n_rings):                                 # ring closures
        u, v = sorted(torch.randperm(n, generator=g)[:2].tolist())
        if (u, v) not in edges:
            edges.append((u, v))
    btypes = torch.multinomial(torch.tensor([0.7, 0.2, 0.1]), len(edges), replacement=True,
                               generator=g)
    return types, edges, btypes


def _batch(g, B, w_atom, w_bond):
    xs, src, dst, rev, ef, a2m, ys = [], [], [], [], [], [], []
    off, eoff = 0, 0
    for m in range(B):
        types, edges, btypes = _molecule(g)
        n = len(types)
        deg = torch.zeros(n)
        for k, (u, v) in enumerate(edges):
            src += [u + off, v + off]
            dst += [v + off, u + off]
            rev += [eoff + 2 * k + 1, eoff + 2 * k]
            ef += [btypes[k], btypes[k]]
            deg[u] += 1
            deg[v] += 1
        x = torch.cat([F.one_hot(types, N_ATOM_TYPES).float(),
                       F.one_hot(deg.long().clamp(max=4), 5).float()], 1)
        xs.append(x)
        a2m += [m] * n
        # intensive (per heavy atom) target
        y = (w_atom[types].sum() + w_bond[btypes].sum() + 0.8 * (len(edges) - n + 1)
             - 0.05 * float((deg ** 2).sum())) / n
        ys.append(y)
        off += n
        eoff += 2 * len(edges)
    return ((torch.cat(xs), torch.tensor(src), torch.tensor(dst), torch.tensor(rev),
             F.one_hot(torch.stack(ef), N_BOND_TYPES).float(), torch.tensor(a2m)),
            torch.stack(ys))


class DMPNN(nn.Module):
    def __init__(self, hidden, depth, ffn_hidden):
        super().__init__()
        fa, fb = N_ATOM_TYPES + 5, N_BOND_TYPES
        self.depth = depth
        self.W_i = nn.Linear(fa + fb, hidden, bias=False)
        self.W_h = nn.Linear(hidden, hidden, bias=False)
        self.W_o = nn.Linear(fa + hidden, hidden)
        self.act = nn.ReLU()
        self.ffn = nn.Sequential(nn.Linear(hidden, ffn_hidden), nn.ReLU(),
                                 nn.Linear(ffn_hidden, 1))

    def forward(self, x, src, dst, rev, ef, a2m):
        h0 = self.act(self.W_i(torch.cat([x[src], ef], 1)))      # directed bond states
        h = h0
        for _ in range(self.depth - 1):
            incoming = torch.zeros(x.shape[0], h.shape[1]).index_add(0, dst, h)
            m = incoming[src] - h[rev]                          # exclude the reverse bond
            h = self.act(h0 + self.W_h(m))
        atom_msg = torch.zeros(x.shape[0], h.shape[1]).index_add(0, dst, h)
        atom_h = self.act(self.W_o(torch.cat([x, atom_msg], 1)))
        n_mol = int(a2m.max()) + 1
        mol = torch.zeros(n_mol, atom_h.shape[1]).index_add(0, a2m, atom_h)
        mol = mol / torch.bincount(a2m, minlength=n_mol).unsqueeze(1)   # mean aggregation
        return self.ffn(mol).squeeze(-1)


class NoamLR:
    """Chemprop's schedule: linear warmup init->max, then exponential decay max->final."""
    def __init__(self, optimizer, warmup, total, init_lr, max_lr, final_lr):
        self.opt, self.warmup, self.total = optimizer, warmup, total
        self.init_lr, self.max_lr, self.final_lr = init_lr, max_lr, final_lr
        self.gamma = (final_lr / max_lr) ** (1.0 / max(1, total - warmup))
        self.n = 0
        self._set()

    def _set(self):
        if self.n <= self.warmup:
            lr = self.init_lr + self.n * (self.max_lr - self.init_lr) / self.warmup
        else:
            lr = self.max_lr * self.gamma ** (self.n - self.warmup)
        for grp in self.opt.param_groups:
            grp["lr"] = lr

    def step(self, *args, **kwargs):
        self.n += 1
        self._set()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=64, depth=3, ffn=64, B=32, steps=80, warmup=10, max_lr=3e-3),
           dict(hidden=48, depth=4, ffn=32, B=24, steps=70, warmup=8, max_lr=1e-2),
           dict(hidden=96, depth=3, ffn=96, B=40, steps=90, warmup=15, max_lr=3e-3)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2019 + seed)
    w_atom = torch.randn(N_ATOM_TYPES, generator=g) * 0.5
    w_bond = torch.randn(N_BOND_TYPES, generator=g) * 0.5
    raw = [_batch(g, cfg["B"], w_atom, w_bond) for _ in range(cfg["steps"])]
    ys = torch.cat([y for _, y in raw])
    mu, sd = ys.mean(), ys.std()
    batches = [(x, (y - mu) / sd) for x, y in raw]              # chemprop scales targets
    model = DMPNN(cfg["hidden"], cfg["depth"], cfg["ffn"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    # config typo: exponent -1 instead of -3 (x100), e.g. "3e-1" for "3e-3"
    max_lr = cfg["max_lr"] if fixed else cfg["max_lr"] * 100
    sched = NoamLR(opt, warmup=cfg["warmup"], total=cfg["steps"], init_lr=1e-4,
                   max_lr=max_lr, final_lr=1e-4)
    opt.register_step_post_hook(lambda optimizer, args, kwargs: sched.step())
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
