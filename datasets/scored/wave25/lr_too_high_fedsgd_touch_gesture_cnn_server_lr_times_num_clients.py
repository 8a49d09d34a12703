"""Touch-gesture recognition from capacitive-grid frames (16x16 sensor image, a few stacked
frames as channels) with a small CNN, trained with federated SGD (FedSGD) over simulated
clients inside one training loop: each step's batch is the concatenation of C clients'
minibatches and the loss is their average, so one optimiser step is one server round.

Mechanism: the server update was written as "sum the client updates" (w -= lr * sum_k g_k),
as in the FedSGD pseudo-code that sums client deltas weighted by n_k/n - but without the 1/n
weighting. Implemented on an averaged loss, that becomes SGD with lr = client_lr * C. With 8-16
simulated clients and momentum 0.9 the step is 8-16x too large: the conv weights' update/weight
ratio is ~1e-1 or more, the first rounds overshoot, the ReLU features are
wrecked and the model falls to a constant-prediction plateau at ~ln(number of gestures) (with
larger client counts it can also blow up to inf/NaN).

ORIGIN: None (lr_too_high: every layer is overshot at once, no single module starts it).

Fix: the weighted average of the client updates, i.e. lr = client_lr (same model, data, steps).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("McMahan et al. 2017 FedSGD/FedAvg (server aggregates sum_k n_k/n * update_k); "
          "aggregation implemented as an unweighted sum, i.e. lr multiplied by the number of "
          "clients - a recurring bug in hand-rolled FL simulations (Flower/FedML issue threads)")


class TouchCNN(nn.Module):
    def __init__(self, ch, n_cls):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(4, ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(2 * ch * 16, 64), nn.ReLU(),
                                        nn.Linear(64, n_cls))

    def forward(self, x):
        return self.classifier(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_clients = [8, 12, 16][seed % 3]
    per_client = [4, 3, 2][seed % 3]
    ch = [8, 12, 10][seed % 3]
    client_lr = [0.05, 0.04, 0.03][seed % 3]
    steps = 100
    n_cls = 6
    model = TouchCNN(ch, n_cls)
    # gestures: a blob (finger contact) moving along a class-specific path over 4 frames
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    starts = torch.rand(n_cls, 2, generator=g) * 8 + 4
    vel = (torch.rand(n_cls, 2, generator=g) - 0.5) * 4
    batches = []
    for _ in range(steps):
        xs, ys = [], []
        for _c in range(n_clients):
            # non-iid: each client mostly performs two of the gestures
            fav = torch.randint(0, n_cls, (2,), generator=g)
            y = fav[torch.randint(0, 2, (per_client,), generator=g)]
            frames = []
            for f in range(4):
                c = starts[y] + vel[y] * f + 0.7 * torch.randn(per_client, 2, generator=g)
                d2 = (yy - c[:, 0, None, None]) ** 2 + (xx - c[:, 1, None, None]) ** 2
                frames.append(torch.exp(-d2 / 4.0))
            x = torch.stack(frames, 1) + 0.05 * torch.randn(per_client, 4, 16, 16, generator=g)
            xs.append(x)
            ys.append(y)
        batches.append((torch.cat(xs), torch.cat(ys)))
    server_lr = client_lr if fixed else client_lr * n_clients
    opt = torch.optim.SGD(model.parameters(), lr=server_lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
