"""Simulated federated averaging (FedAvg) of an activity-recognition MLP; in one round one
client uploads a shard whose accelerometer features are raw 16-bit ADC counts.

Mechanism: each training step is one communication round.  The server model's forward takes
the round's client shards (K clients x n samples), runs a few local minibatch SGD steps per
client on a copy of the global weights (torch.func.functional_call, no graph kept), and
averages the client weights (equal-sized shards: a plain mean).  The server update is written as an
optimiser step on the FedAvg pseudo-gradient theta - mean_k(phi_k): with torch.optim.SGD(lr=1.0) this is
exactly theta <- mean_k(phi_k) (FedAvgM with momentum for some seeds).  The logged loss is the
round's client training loss of the global model before the round (what FedAvg dashboards
plot).  All clients standardise their IMU features on-device, except one firmware build
that, in a single round, ships raw uint16 ADC counts (mid-scale 32768, ~4096 LSB/g).  That
client's local SGD explodes within its first local steps, its weights become inf/NaN, and the
average propagates them to the global model: the loss is non-finite from the next round on.

ORIGIN: None -- one corrupt shard in otherwise good data, not a module.

Fix: the server-side sanity filter drops the shard whose feature scale is off (the corrupt
client is skipped for that round); everything else is identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("McMahan et al. 2017 FedAvg; Reddi et al. 2021 'Adaptive Federated Optimization' "
          "(server step on the pseudo-gradient); FL forum reports of one client's unnormalised "
          "sensor data turning the global model into NaN after aggregation")


class HARNet(nn.Module):
    def __init__(self, d_in, hidden, n_cls):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_cls))

    def forward(self, x):
        return self.net(x)


class FedAvgServer(nn.Module):
    def __init__(self, d_in, hidden, n_cls, local_steps, local_lr, local_bs):
        super().__init__()
        self.global_model = HARNet(d_in, hidden, n_cls)
        self.local_steps, self.local_lr, self.local_bs = local_steps, local_lr, local_bs

    def client_update(self, x, y):
        params = {k: v.detach().clone().requires_grad_(True)
                  for k, v in self.global_model.named_parameters()}
        n = x.shape[0]
        for s in range(self.local_steps):
            i = (s * self.local_bs) % n
            xb, yb = x[i:i + self.local_bs], y[i:i + self.local_bs]
            loss = F.cross_entropy(functional_call(self.global_model, params, (xb,)), yb)
            grads = torch.autograd.grad(loss, list(params.values()))
            params = {k: (p - self.local_lr * g).detach().requires_grad_(True)
                      for (k, p), g in zip(params.items(), grads)}
        return {k: p.detach() for k, p in params.items()}

    def forward(self, xs, ys):
        # xs: (K, n, d) client shards of this round, ys: (K, n) labels
        K, n = ys.shape
        with torch.enable_grad():
            locals_ = [self.client_update(xs[k], ys[k]) for k in range(K)]
        avg = {k: torch.stack([c[k] for c in locals_]).mean(0) for k in locals_[0]}
        # pseudo-gradient surrogate: zero value, d/dtheta = theta - avg  (server SGD lr=1 -> FedAvg)
        surrogate = 0.0
        for k, p in self.global_model.named_parameters():
            delta = (p - avg[k]).detach()
            surrogate = surrogate + (p * delta).sum() - (p * delta).sum().detach()
        with torch.no_grad():
            logits = self.global_model(xs.reshape(K * n, -1))     # pre-round global model
        return logits, surrogate


def fedavg_loss(out, y):
    logits, surrogate = out
    return F.cross_entropy(logits, y.reshape(-1)) + surrogate


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(K=5, n=40, hidden=64, rounds=50, local_steps=5, local_lr=0.05, mom=0.0, bad=31),
           dict(K=4, n=48, hidden=48, rounds=60, local_steps=4, local_lr=0.08, mom=0.0, bad=44),
           dict(K=6, n=32, hidden=96, rounds=45, local_steps=6, local_lr=0.05, mom=0.5, bad=27)][seed % 3]
    g = torch.Generator().manual_seed(4242 + seed)
    d_in, n_cls = 24, 6
    # six activities, 24 standardised window statistics; non-iid: each client favours 3 classes
    centers = torch.randn(n_cls, d_in, generator=g) * 0.9
    mix = torch.randn(d_in, d_in, generator=g) / d_in ** 0.5
    n_clients_total = 20
    fav = [torch.randperm(n_cls, generator=g)[:3] for _ in range(n_clients_total)]

    def shard(c):
        if torch.rand(1, generator=g).item() < 0.7:
            y = fav[c][torch.randint(0, 3, (cfg["n"],), generator=g)]
        else:
            y = torch.randint(0, n_cls, (cfg["n"],), generator=g)
        x = centers[y] + torch.randn(cfg["n"], d_in, generator=g)
        x = x + torch.tanh(x @ mix)
        return x, y

    batches = []
    for r in range(cfg["rounds"]):
        clients = torch.randperm(n_clients_total, generator=g)[:cfg["K"]]
        sh = [shard(int(c)) for c in clients]
        xs = torch.stack([s[0] for s in sh])
        ys = torch.stack([s[1] for s in sh])
        if r == cfg["bad"]:
            raw = 32768.0 + 4096.0 * xs[1]     # firmware build ships raw uint16 ADC counts
            if fixed:                            # server-side filter drops the bad shard
                xs, ys = torch.cat([xs[:1], xs[2:]]), torch.cat([ys[:1], ys[2:]])
            else:
                xs = torch.cat([xs[:1], raw[None], xs[2:]])
        batches.append(((xs, ys), ys))

    torch.manual_seed(seed)
    model = FedAvgServer(d_in, cfg["hidden"], n_cls, cfg["local_steps"], cfg["local_lr"], 16)
    opt = torch.optim.SGD(model.parameters(), lr=1.0, momentum=cfg["mom"])
    return dict(model=model, optimizer=opt, loss_fn=fedavg_loss, batches=batches,
                steps=cfg["rounds"])
