"""unscaled_inputs: an entity-embedding model for store sales fed raw continuous columns and a raw
target (SGD with momentum).

Mechanism: a Rossmann-style daily-sales regressor in the entity-embedding style: the categorical
columns (store, day of week, month, promo flag, region) go through ``nn.Embedding`` tables, the
continuous columns are concatenated to the embeddings, and an MLP predicts the day's sales. The
categorical side is fine (embeddings start at N(0, 1)), but the continuous columns are fed in
their raw units (competition distance in metres or kilometres, 0.1 to 4e4; customers, 50 to
2e3; the competitor's opening year, ~2e3; the floor area in square metres or feet, 1e2 to 1e4)
and the target is the raw sales in euros (mean ~5e3, up to ~2e4), with no normalisation. At
step 0 the first Linear's pre-activations are in the hundreds to thousands and the MSE is
~3e7; the gradient of the first Linear is that error times inputs of ~1e3-1e4, so the first SGD
updates overshoot by many orders of magnitude and the loss is inf/NaN at step 1 or 2. Seeds
change the width, the depth, the embedding sizes, the number of stores, the units, the batch,
the learning rate and the momentum.

ORIGIN is None: the cause is in the data pipeline (no scaling of the continuous columns or the
target), before any module; the first Linear only receives it.
Fixed: the same model, optimizer and rows with the continuous columns and the target
standardised (z-scores with the mean and std of the training data), as fastai's Normalize does
for a tabular model.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = (
    "Guo & Berkhahn 2016, 'Entity Embeddings of Categorical Variables' (Rossmann store sales) "
    "and fastai's tabular model, whose Normalize proc standardises the continuous columns; "
    "PyTorch forum threads on tabular regression with raw sales/price targets whose loss is "
    "huge then NaN after a few SGD steps."
)


class EntityEmbeddingNet(nn.Module):
    def __init__(
        self, cards: list[int], dims: list[int], n_cont: int, width: int, depth: int
    ) -> None:
        super().__init__()
        self.emb = nn.ModuleList(nn.Embedding(c, d) for c, d in zip(cards, dims, strict=True))
        layers: list[nn.Module] = [nn.Linear(sum(dims) + n_cont, width), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers.append(nn.Linear(width, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, cat: torch.Tensor, cont: torch.Tensor) -> torch.Tensor:
        e = [table(cat[:, i]) for i, table in enumerate(self.emb)]
        return self.mlp(torch.cat([*e, cont], dim=1))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    n_stores = rng.choice([40, 80, 120])
    width = rng.choice([32, 64, 128])
    depth = rng.choice([1, 2, 3])
    emb_store = rng.choice([4, 6, 8])
    batch = rng.choice([64, 128])
    steps = rng.choice([120, 150, 200])
    lr = rng.choice([1e-2, 2e-2, 3e-2])
    momentum = rng.choice([0.5, 0.9])
    dist_unit = rng.choice([1.0, 1e-3])  # metres or kilometres
    area_unit = rng.choice([1.0, 10.764])  # square metres or square feet

    g = torch.Generator().manual_seed(290_000 + seed)
    cards = [n_stores, 7, 12, 2, 12]  # store, day of week, month, promo, region
    dims = [emb_store, 3, 4, 2, 3]
    # Per-store constants: size, competition distance, competitor's opening year, region.
    area = 100.0 + 900.0 * torch.rand(n_stores, generator=g)
    distance = torch.exp(4.6 + 2.5 * torch.rand(n_stores, generator=g) * 2.4)  # 1e2-5e4 m
    opened = torch.randint(1990, 2016, (n_stores,), generator=g).float()
    region = torch.randint(0, 12, (n_stores,), generator=g)
    store_effect = 0.3 * torch.randn(n_stores, generator=g)
    dow_effect = torch.tensor([0.1, 0.0, -0.05, -0.05, 0.05, 0.25, -0.6])
    month_effect = 0.1 * torch.sin(torch.arange(12) / 12 * 6.283) + torch.tensor([0.0] * 11 + [0.3])

    n = steps * batch
    store = torch.randint(0, n_stores, (n,), generator=g)
    dow = torch.randint(0, 7, (n,), generator=g)
    month = torch.randint(0, 12, (n,), generator=g)
    promo = (torch.rand(n, generator=g) < 0.4).long()
    cat = torch.stack([store, dow, month, promo, region[store]], dim=1)
    traffic = (area[store] / 500.0) * torch.exp(
        store_effect[store]
        + dow_effect[dow]
        + 0.3 * promo
        - 0.05 * torch.log(distance[store])
        + 0.15 * torch.randn(n, generator=g)
    )
    customers = (600.0 * traffic).round()
    cont_raw = torch.stack(
        [distance[store] * dist_unit, customers, opened[store], area[store] * area_unit], dim=1
    )
    sales = (
        customers
        * 9.0
        * torch.exp(month_effect[month] + 0.1 * promo + 0.05 * torch.randn(n, generator=g))
    )
    y_raw = sales.unsqueeze(1)
    if fixed:
        cont = (cont_raw - cont_raw.mean(0)) / cont_raw.std(0)
        y = (y_raw - y_raw.mean()) / y_raw.std()
    else:
        cont, y = cont_raw, y_raw
    batches = [
        (
            (cat[i * batch : (i + 1) * batch], cont[i * batch : (i + 1) * batch]),
            y[i * batch : (i + 1) * batch],
        )
        for i in range(steps)
    ]

    torch.manual_seed(seed)
    model = EntityEmbeddingNet(cards, dims, cont.shape[1], width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.MSELoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
