"""Should-cost surrogate over a bill of materials: component encoder -> quantity-weighted BOM
explosion (dense matmul) -> per-item MLP predicting the (standardised) log rolled-up cost of a
planning item (a unit, a case or a pallet of finished goods). Trained under
torch.autocast(float16) to speed up the nightly planning batch.

Mechanism: the explosion matrix holds, for each planning item, the total quantity of every purchased
component (finished units per planning item x sub-assemblies per unit x parts per sub-assembly,
summed over BOM paths). Most planning items are single units or cases, and every product stays far
below the float16 range; the occasional full-pallet item (its first appearance depends on the seed)
carries fastener and passive counts of 10^4-10^5. Under autocast the ``explode`` matmul runs in
float16: the quantities above 65504 are cast to inf, and the products
quantity x embedding that pass 65504 overflow too. The per-row normalisation by total quantity comes
*after* the matmul, too late; inf - inf / inf * 0 turn into NaN in the normalised aggregate and the
loss is NaN on the first batch that contains such a pallet, after a normal start.

ORIGIN: ``explode`` -- the quantity-weighted aggregation whose float16 matmul overflows; the encoder
before it is fine.

Fix: autocast to bfloat16 (float32's exponent range) instead of float16; model, data, optimiser, lr and
steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "explode"
SOURCE = ("PyTorch AMP docs (float16 max 65504; matmul autocasts to float16); known pattern of "
          "quantity/count matrices (BOM explosion, sum aggregation) overflowing half precision before "
          "a later normalisation, fixed by bf16 or running the op in float32")


class BOMExplode(nn.Module):
    """Quantity-weighted sum of component embeddings, normalised by total quantity afterwards."""

    def forward(self, qty, comp_h):
        agg = qty @ comp_h                                     # (B, C) @ (C, d): float16 under autocast
        return agg / qty.sum(1, keepdim=True)


class CostRollup(nn.Module):
    def __init__(self, fc, h, depth):
        super().__init__()
        layers, d = [], fc
        for _ in range(depth):
            layers += [nn.Linear(d, h), nn.GELU()]
            d = h
        self.encoder = nn.Sequential(*layers)
        self.explode = BOMExplode()
        self.head = nn.Sequential(nn.Linear(h + 1, h), nn.GELU(), nn.Linear(h, 1))

    def forward(self, comp_feats, qty):
        comp_h = self.encoder(comp_feats)
        agg = self.explode(qty, comp_h)
        log_total = ((torch.log(qty.sum(1, keepdim=True)) - 10.0) / 1.5).to(agg.dtype)
        return self.head(torch.cat([agg, log_total], 1)).squeeze(-1)


def _bom(g, bs, C, p_pallet):
    comp_cost = torch.exp(torch.randn(C, generator=g) * 0.8)              # unit cost ($)
    comp_kind = torch.randint(0, 4, (C,), generator=g)                   # fastener/passive/machined/IC
    lead = torch.rand(C, generator=g)
    comp_feats = torch.stack([torch.log(comp_cost) / 0.8, lead] +
                             [(comp_kind == k).float() for k in range(4)], 1)
    # planning unit: single finished unit, a case (6-12 units) or, rarely, a full pallet (48-96)
    u = torch.rand(bs, generator=g)
    per_case = torch.randint(6, 13, (bs,), generator=g).float()
    per_pal = torch.randint(48, 97, (bs,), generator=g).float()
    per_pallet = torch.where(u < p_pallet, per_pal, torch.where(u < 0.35, per_case, torch.ones(bs)))
    qty = torch.zeros(bs, C)
    for _ in range(3):                                                     # three sub-assembly paths
        subs = torch.randint(1, 9, (bs,), generator=g).float()
        parts = torch.randint(0, C, (bs, 6), generator=g)
        kind = comp_kind[parts]
        per = torch.where(kind <= 1, torch.randint(20, 301, (bs, 6), generator=g),
                          torch.randint(1, 5, (bs, 6), generator=g)).float()
        qty.scatter_add_(1, parts, per * (subs * per_pallet).unsqueeze(1))
    cost = (qty * comp_cost.unsqueeze(0)).sum(1)
    return (comp_feats, qty), torch.log(cost)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [64, 96, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [48, 32, 64][seed % 3]
    lr = [3e-3, 2e-3, 3e-3][seed % 3]
    C = [96, 128, 80][seed % 3]
    steps = 250
    p_pallet = [0.001, 0.0015, 0.002][seed % 3]
    raw = [_bom(g, bs, C, p_pallet) for _ in range(steps)]
    ys = torch.cat([r[1] for r in raw])
    mu, sd = ys.mean(), ys.std()
    batches = [(x, (y - mu) / sd) for x, y in raw]
    torch.manual_seed(seed)
    model = CostRollup(6, h, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
