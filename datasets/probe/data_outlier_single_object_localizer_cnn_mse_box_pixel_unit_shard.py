"""Single-object localisation CNN (conv backbone + FC box-regression head predicting
(cx, cy, w, h) as fractions of the image, the classic "localisation as regression" setup), MSE loss,
SGD with momentum.

Mechanism: one annotation shard was exported in absolute pixel coordinates (300x300 images)
instead of normalised [0, 1] boxes. The targets of that single batch are finite but ~300x too
large; the MSE gradient of that batch is ~300x (loss ~1e4x) the usual one and the SGD+momentum
step it produces (and the following momentum steps) throws the
head and backbone far away; the BN-free net then outputs huge boxes and the loss blows up to inf/NaN
(or never returns below its first values).
ORIGIN: None (one corrupt batch).
Fix: convert that shard to normalised coordinates like the others.
"""
import torch, torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "localisation-as-regression tutorials (VOC/CUB bounding boxes): one annotation export in absolute pixels mixed with normalised boxes"


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, bs, lr, steps, bad = [(16, 16, 0.03, 80, 30), (12, 12, 0.03, 70, 22), (20, 20, 0.015, 90, 45)][seed % 3]
    S = 24
    model = nn.Sequential(
        nn.Conv2d(1, w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(2 * w * 36, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = []
    for i in range(steps):
        x = 0.1 * torch.randn(bs, 1, S, S, generator=g)
        box = torch.zeros(bs, 4)
        for b in range(bs):
            bw, bh = [int(v) for v in torch.randint(4, 10, (2,), generator=g)]
            x0 = int(torch.randint(0, S - bw, (1,), generator=g)); y0 = int(torch.randint(0, S - bh, (1,), generator=g))
            x[b, 0, y0:y0 + bh, x0:x0 + bw] += 1.0
            box[b] = torch.tensor([(x0 + bw / 2) / S, (y0 + bh / 2) / S, bw / S, bh / S])
        if i == bad and not fixed:
            box = box * 300.0
        batches.append((x, box))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
