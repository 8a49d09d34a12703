"""Healthy: task-conditioned hypernetwork trained under fp16 autocast whose GradScaler
skips its first steps.

What looks alarming: a hypernetwork (Ha et al. 2017; von Oswald et al. 2020 style task
embeddings) maps a learned task embedding to the full weight vector of a small target MLP
(1 -> H -> H -> 1), which is then applied per sample with ``torch.bmm``; every batch mixes
samples of several regression tasks that share the hypernetwork.  Training runs in float16 autocast with
``GradScaler(init_scale=2**24)`` copied from a large-model recipe.  The scaled loss
(~1e7) makes the float16 backward through the generated-weight matmuls overflow: the first
~6 steps have inf gradients, the scaler silently skips ``optimizer.step()`` and halves the
scale each time (and skips again occasionally later), so the loss is flat for the first
steps and the gradients contain infs.  Once the scale has backed off, training proceeds
normally and the loss falls.

Why it is fine: this is the dynamic loss-scaling protocol working as designed; skipped
steps never touch the weights and the loss itself is always finite.

ORIGIN is None (healthy run).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Ha, Dai & Le 2017 'HyperNetworks'; von Oswald et al. 2020 'Continual learning "
          "with hypernetworks' (task embeddings -> target weights); PyTorch AMP GradScaler "
          "skip-and-backoff behaviour")


class HyperNetwork(nn.Module):
    def __init__(self, n_tasks, emb, hidden, target_hidden):
        super().__init__()
        self.h = target_hidden
        self.shapes = [(target_hidden, 1), (target_hidden,), (target_hidden, target_hidden),
                       (target_hidden,), (1, target_hidden), (1,)]
        n_out = sum(math.prod(s) for s in self.shapes)
        self.task_emb = nn.Embedding(n_tasks, emb)
        self.body = nn.Sequential(nn.Linear(emb, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, n_out)
        with torch.no_grad():  # hyperfan-style: small generated weights
            self.head.weight.mul_(0.3)

    def forward(self, task_id):  # task_id: (B,) -> per-sample target parameters
        flat = self.head(self.body(self.task_emb(task_id)))
        params, i = [], 0
        for s in self.shapes:
            n = math.prod(s)
            params.append(flat[:, i:i + n].reshape(-1, *s))
            i += n
        return params


class HyperRegressor(nn.Module):
    def __init__(self, n_tasks, emb, hidden, target_hidden):
        super().__init__()
        self.hyper = HyperNetwork(n_tasks, emb, hidden, target_hidden)

    def forward(self, x, task_id):  # x: (B, 1), task_id: (B,)
        w1, b1, w2, b2, w3, b3 = self.hyper(task_id)
        h = torch.tanh(torch.bmm(w1, x.unsqueeze(-1)).squeeze(-1) + b1)
        h = torch.tanh(torch.bmm(w2, h.unsqueeze(-1)).squeeze(-1) + b2)
        return torch.bmm(w3, h.unsqueeze(-1)).squeeze(-1) + b3


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(tasks=6, emb=16, hidden=64, th=32, bs=64, lr=3e-3, steps=180),
           dict(tasks=10, emb=8, hidden=96, th=24, bs=48, lr=3e-3, steps=150),
           dict(tasks=4, emb=12, hidden=48, th=40, bs=96, lr=3e-3, steps=170)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2718 + seed)
    amp = 0.5 + torch.rand(cfg["tasks"], generator=g)
    freq = 0.8 + 1.5 * torch.rand(cfg["tasks"], generator=g)
    phase = 3.0 * torch.rand(cfg["tasks"], generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        t = torch.randint(0, cfg["tasks"], (cfg["bs"],), generator=g)  # mixed-task batch
        x = 4 * torch.rand(cfg["bs"], 1, generator=g) - 2
        y = amp[t, None] * torch.sin(freq[t, None] * x + phase[t, None])
        batches.append(((x, t), y))
    model = HyperRegressor(cfg["tasks"], cfg["emb"], cfg["hidden"], cfg["th"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16, scaler=scaler)
