"""Deep Averaging Network (Iyyer et al. 2015) text classifier.  The original script used plain
SGD with lr 0.5-1.0; torch.optim.AdamW was swapped in and the lr line left untouched.

Mechanism: averaged embeddings of all sentences lie in a small region, so the first ReLU layer
sees nearly the same input direction for every example.  Adam's first steps move every weight by
~lr regardless of gradient size; at lr 0.5+ the first hidden layer's weights/biases are pushed
so that its pre-activations are negative for every input.  The ReLU `mlp.1` dies (100% zeros),
the rest of the net sees a constant, and the loss jumps once then stays flat at ~log(C).
ORIGIN: `mlp.1`, the first ReLU after the averaged embeddings.
Fix: AdamW's usual lr 3e-3.
"""
import torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = "DAN (Iyyer et al. 2015) reimplementations; reports of ReLU text classifiers predicting one class after replacing SGD by Adam without changing lr"


class DAN(nn.Module):
    def __init__(self, V, E, H, C):
        super().__init__()
        self.embed = nn.EmbeddingBag(V, E, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(E, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU(), nn.Linear(H, C))

    def forward(self, x):
        return self.mlp(self.embed(x))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(E=50, H=64, bs=64, L=20, lr=0.5, steps=120),
           dict(E=32, H=96, bs=96, L=16, lr=0.8, steps=100),
           dict(E=64, H=48, bs=48, L=24, lr=1.0, steps=150)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5 + seed)
    V, C = 500, 4
    polar = torch.randint(0, C, (V,), generator=g)
    strong = torch.rand(V, generator=g) < 0.15
    model = DAN(V, cfg["E"], cfg["H"], C)
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, C, (cfg["bs"],), generator=g)
        x = torch.randint(0, V, (cfg["bs"], cfg["L"]), generator=g)
        cand = torch.nonzero(strong).flatten()
        for i in range(cfg["bs"]):
            pool = cand[polar[cand] == y[i]]
            k = cfg["L"] // 3
            x[i, :k] = pool[torch.randint(0, len(pool), (k,), generator=g)]
        batches.append((x, y))
    loss = nn.CrossEntropyLoss()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3 if fixed else cfg["lr"], weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss, batches=batches, steps=cfg["steps"])
