"""Warehouse put-away: a pointer-style scorer picks the storage bin, infeasible bins masked with -inf (healthy).

What happens: for each inbound pallet (SKU velocity class, weight, cube, temperature
zone, hazmat flag, ...) the model scores all candidate bins of the aisle block (bin
level, distance to dock, free capacity, zone, load limit) with a scaled dot product
between an SKU query and bin keys, and is trained with cross-entropy to imitate the
bin chosen by the slotting expert. Bins that are full, in the wrong temperature
zone or whose load limit is below the pallet weight get logit -inf (``masked_fill``)
- typically 30-70 % of them. The expert's bin is always feasible, so
``F.cross_entropy`` only ever reads finite log-probabilities: the -inf entries get
probability exactly 0 and gradient exactly 0, and the loss is finite and falls.

A naive monitor may flag: -inf in the model output, many exactly-zero gradient
entries. None is a fault.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Pointer networks / attention scorers with -inf masking of infeasible actions (Vinyals "
          "et al. 2015; Kool et al. 2019 'Attention, learn to solve routing problems'); learning "
          "storage assignment / slotting policies from expert decisions (e.g. Li et al. 2019, "
          "'Learning-based storage location assignment').")


class PutawayScorer(nn.Module):
    def __init__(self, d, width):
        super().__init__()
        self.sku = nn.Sequential(nn.Linear(8, width), nn.ReLU(), nn.Linear(width, d))
        self.bin = nn.Sequential(nn.Linear(7, width), nn.ReLU(), nn.Linear(width, d))
        self.d = d

    def forward(self, sku, bins, feasible):
        q = self.sku(sku)[:, None, :]                  # B x 1 x d
        k = self.bin(bins)                             # B x N x d
        logits = (q * k).sum(-1) / self.d ** 0.5       # B x N
        return logits.masked_fill(~feasible, float("-inf"))


def _pallets(g, n, n_bins):
    sku = torch.randn(n, 8, generator=g)           # velocity, weight, cube, zone, hazmat, ...
    bins = torch.randn(n, n_bins, 7, generator=g)  # level, dist-to-dock, free cap, zone, limit, ...
    zone_ok = (bins[..., 3] > -0.6) | (sku[:, None, 3] < 0)
    cap_ok = bins[..., 2] > -0.3
    load_ok = bins[..., 4] > sku[:, None, 1] - 0.8
    feasible = zone_ok & cap_ok & load_ok
    # expert rule: fast movers low & close to dock, heavy pallets low, keep free capacity balanced
    util = (-(0.8 + 0.6 * sku[:, None, 0]) * bins[..., 1] - (0.5 + 0.5 * sku[:, None, 1]) * bins[..., 0]
            + 0.3 * bins[..., 2] + 0.2 * sku[:, None, 5] * bins[..., 5])
    util = util + 0.3 * torch.randn(n, n_bins, generator=g)
    util = util.masked_fill(~feasible, float("-inf"))
    none = ~feasible.any(1)
    feasible[none, 0] = True                       # a pallet always has at least one legal bin
    util[none, 0] = 0.0
    target = util.argmax(1)
    return (sku, bins, feasible), target


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    d = [32, 16, 24][seed % 3]
    width = [64, 48, 96][seed % 3]
    n_bins = [40, 64, 24][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = [2e-3, 3e-3, 1e-3][seed % 3]
    steps = 200
    model = PutawayScorer(d, width)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    batches = [_pallets(g, bs, n_bins) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
