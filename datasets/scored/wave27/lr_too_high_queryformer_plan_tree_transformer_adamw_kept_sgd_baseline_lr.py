"""Learned query-plan cost model (QueryFormer / "plan transformer" style): each physical plan
node (operator type, estimated rows, estimated width, predicate selectivity, depth in the plan
tree) becomes a token, a small Transformer encoder with a tree-depth embedding attends over the
plan, and a [CLS]-style mean readout regresses the standardised log execution time
(Huber loss, AdamW).

Mechanism: the training script was adapted from a GBDT/MLP baseline trained with SGD at
lr = 0.3-0.5 and the lr was kept when the optimiser was switched to AdamW.  Adam's update per
parameter is ~lr regardless of the gradient size, so every weight (embeddings, attention
projections, LayerNorm gains) moves by ~0.3-0.5 per step -- an update/weight ratio of
~1e-1..1e0 instead of ~1e-3.  Attention logits and the FFN outputs jump from step to step,
the model lands on a bad plateau and the loss never goes below its early value (no NaN: the
LayerNorms keep activations bounded).

ORIGIN: None -- the lr is a global optimiser setting; no single module starts it.

Fix: lr = 1e-3 (a standard AdamW lr for a small transformer); same model, data, steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("QueryFormer (Zhao et al., VLDB 2022) / zero-shot cost models (Hilprecht & Binnig, "
          "VLDB 2022); 'switched SGD->Adam and kept the SGD lr, loss stuck' forum reports")

N_OPS = 8


class PlanTransformer(nn.Module):
    def __init__(self, d, heads, layers, max_depth=8):
        super().__init__()
        self.op_emb = nn.Embedding(N_OPS, d)
        self.depth_emb = nn.Embedding(max_depth, d)
        self.num_proj = nn.Linear(3, d)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, 1)
        nn.init.zeros_(self.head.weight)  # start from the "predict the mean" baseline
        nn.init.zeros_(self.head.bias)

    def forward(self, ops, depth, num):
        h = self.op_emb(ops) + self.depth_emb(depth) + self.num_proj(num)
        h = self.encoder(h)
        return self.head(h.mean(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [32, 48, 64][seed % 3]
    layers = [2, 1, 2][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = 1e-3 if fixed else [0.5, 0.3, 0.4][seed % 3]
    steps = 150
    L = 7  # nodes per plan

    torch.manual_seed(seed)
    model = PlanTransformer(d, 4, layers)
    op_cost = torch.rand(N_OPS, generator=g) * 2
    # training-set standardisation of the cost label (from a calibration sample of plans)
    cal_ops = torch.randint(0, N_OPS, (4096, L), generator=g)
    cal_rows = torch.rand(4096, L, generator=g) * 2 - 1
    cal_w = torch.rand(4096, L, generator=g) * 2 - 1
    cal = (op_cost[cal_ops] * (1 + cal_rows)).sum(1) + 0.3 * (cal_w * cal_rows).sum(1)
    mu, sd = float(cal.mean()), float(cal.std())
    batches = []
    for _ in range(steps):
        ops = torch.randint(0, N_OPS, (bs, L), generator=g)
        depth = torch.randint(0, 8, (bs, L), generator=g)
        log_rows = torch.rand(bs, L, generator=g) * 2 - 1
        width = torch.rand(bs, L, generator=g) * 2 - 1
        sel = torch.rand(bs, L, generator=g) * 2 - 1
        num = torch.stack([log_rows, width, sel], -1)
        cost = (op_cost[ops] * (1 + log_rows)).sum(1) + 0.3 * (width * log_rows).sum(1)
        y = (cost - mu) / sd + 0.05 * torch.randn(bs, generator=g)
        batches.append(((ops, depth, num), y))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(delta=1.0), batches=batches, steps=steps)
