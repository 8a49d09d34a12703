"""Store-level demand model trained on aggregated revenue: a shared per-SKU MLP maps the features
of each of 48 SKUs in a store-day to a log quantity, quantities are exp'ed, and a revenue
aggregator computes revenue = sum_k qty_k * price_k with a batched matmul against the price
vector, which the ERP exports as integer cents.  The loss is the squared error of log revenue, so
the cents do not matter numerically in fp32.  The run uses fp16 autocast on CPU to save time: the
bmm is an autocast fp16 op, so qty and price are cast to half and the dot product is accumulated
in half.  At initialisation quantities are ~1 and store revenue ~4e4 cents, below the fp16
maximum of 65504; as the model learns the real quantities (5-40 units per SKU) the revenue passes
65504 cents ($655) after a handful of steps, the bmm returns inf, log(inf) = inf, and the backward
pass fills the weights with NaN.  No GradScaler would help: the overflow is in the forward value.
Fixed: bf16 autocast (same 8-bit exponent range as fp32), nothing else changed."""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "revenue"
SOURCE = ("Retail demand models fitted to aggregated revenue (quantity x price) with prices stored in "
          "integer cents; PyTorch AMP docs: matmul/bmm autocast to float16, whose max is 65504, and "
          "the recurring 'loss becomes inf/nan only with amp' forum reports for sums of products")


class RevenueAggregator(nn.Module):
    def forward(self, qty, price_cents):
        # (B, 1, K) @ (B, K, 1) -> (B,) revenue in cents
        return torch.bmm(qty.unsqueeze(1), price_cents.unsqueeze(-1)).reshape(-1)


class StoreDemandModel(nn.Module):
    def __init__(self, n_feat=10, hidden=32):
        super().__init__()
        self.sku_mlp = nn.Sequential(nn.Linear(n_feat, hidden), nn.GELU(), nn.Linear(hidden, hidden),
                                     nn.GELU(), nn.Linear(hidden, 1))
        self.revenue = RevenueAggregator()

    def forward(self, sku_feats, price_cents):
        log_qty = self.sku_mlp(sku_feats).squeeze(-1)            # (B, K)
        qty = torch.exp(log_qty)
        rev = self.revenue(qty, price_cents)
        return {"log_qty": log_qty, "revenue": rev}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_feat, K, bs, steps = 10, 48, 32, 120
    w = torch.randn(n_feat, generator=g) * 0.3

    def sample(n):
        f = torch.randn(n, K, n_feat, generator=g)
        price = torch.randint(199, 1500, (n, K), generator=g).float()          # cents
        log_q = 2.6 + f @ w - 0.8 * (torch.log(price) - math.log(800.0))
        qty = torch.poisson(torch.exp(log_q), generator=g)
        rev = (qty * price).sum(-1)
        return f, price, torch.log(rev)

    batches = []
    for s in range(steps):
        f, price, log_rev = sample(bs)
        batches.append(((f, price), log_rev))

    model = StoreDemandModel(n_feat)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)

    def loss_fn(out, target):
        return ((torch.log(out["revenue"].float()) - target) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
