"""ANIL (Almost No Inner Loop, Raghu et al. 2020) few-shot regression of building electricity
load: a shared MLP backbone, and only the linear head is adapted per building in the inner
loop (second-order through the head).  Features and targets are fed in raw units.

Mechanism: each training step is a meta-batch of buildings; each building gives a support
set (a few metered hours) and a query set.  The inner loop takes 2-3 SGD steps on the head
weights from the shared head init, the outer loss is the query MSE of the adapted head.  The
features are logged values -- floor area in m^2 (800-20000), occupancy (0-900 people),
outdoor temperature in K (~265-305), hour of day (0-23), installed HVAC power in kW -- and
the target is hourly load in kWh (hundreds to thousands).  The backbone's first layer emits
activations in the thousands, the head's inner-loop gradient is ~(pred - y) * features
~1e6-1e7, the inner SGD step (lr 0.01) overshoots by orders of magnitude, and the query MSE
is astronomically large (~1e30) from the very first meta-step, and for most seeds overflows
to inf/NaN immediately.

ORIGIN: `backbone.0`, the first layer that receives the unscaled features.

Fix: z-score features and targets with the meta-training statistics (and un-scale the
predictions for reporting if needed); the inner and outer optimisers are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "backbone.0"
SOURCE = ("Raghu et al. 2020 'Rapid Learning or Feature Reuse?' (ANIL: inner loop on the head "
          "only); building-energy few-shot/meta-learning papers; forum threads 'MAML loss is "
          "inf/nan from the first iteration' on unnormalised kWh data")


class ANIL(nn.Module):
    def __init__(self, d_in, hidden, inner_steps, inner_lr):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                      nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, 1)
        self.inner_steps, self.inner_lr = inner_steps, inner_lr

    def forward(self, xs, ys, xq):
        # xs: (T, K, d), ys: (T, K, 1), xq: (T, Q, d)
        T = xs.shape[0]
        fs, fq = self.backbone(xs), self.backbone(xq)
        w = self.head.weight.unsqueeze(0).expand(T, -1, -1)       # (T, 1, h)
        b = self.head.bias.view(1, 1, 1).expand(T, 1, 1)
        for _ in range(self.inner_steps):
            pred = fs @ w.transpose(1, 2) + b
            loss = ((pred - ys) ** 2).mean((1, 2)).sum()
            gw, gb = torch.autograd.grad(loss, (w, b), create_graph=True)
            w, b = w - self.inner_lr * gw, b - self.inner_lr * gb
        return fq @ w.transpose(1, 2) + b


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=64, T=8, K=10, Q=16, inner_steps=3, inner_lr=0.01, lr=1e-3, steps=120),
           dict(hidden=48, T=6, K=12, Q=12, inner_steps=3, inner_lr=0.02, lr=2e-3, steps=100),
           dict(hidden=96, T=10, K=8, Q=16, inner_steps=2, inner_lr=0.01, lr=1e-3, steps=140)][seed % 3]
    g = torch.Generator().manual_seed(515 + seed)
    T, K, Q = cfg["T"], cfg["K"], cfg["Q"]

    def building_tasks():
        area = 800 + 19200 * torch.rand(T, 1, 1, generator=g)
        hvac_kw = area * (0.03 + 0.05 * torch.rand(T, 1, 1, generator=g))
        base = area * (0.01 + 0.02 * torch.rand(T, 1, 1, generator=g))
        n = K + Q
        hour = torch.randint(0, 24, (T, n, 1), generator=g).float()
        temp_k = 285 + 12 * torch.randn(T, n, 1, generator=g)
        occ = (area / 25) * torch.clamp(torch.sin((hour - 6) / 12 * 3.1416), min=0) \
            * (0.6 + 0.4 * torch.rand(T, n, 1, generator=g))
        load = base + 0.6 * occ + hvac_kw * 0.04 * (temp_k - 291).abs() \
            + 20 * torch.randn(T, n, 1, generator=g)
        x = torch.cat([area.expand(T, n, 1), occ, temp_k, hour, hvac_kw.expand(T, n, 1)], dim=-1)
        return x, load

    # meta-training statistics (what a scaler fitted on the training buildings would hold)
    xs_stat, y_stat = building_tasks()
    x_mu, x_sd = xs_stat.reshape(-1, 5).mean(0), xs_stat.reshape(-1, 5).std(0)
    y_mu, y_sd = y_stat.mean(), y_stat.std()
    batches = []
    for _ in range(cfg["steps"]):
        x, y = building_tasks()
        if fixed:
            x, y = (x - x_mu) / x_sd, (y - y_mu) / y_sd
        batches.append(((x[:, :K], y[:, :K], x[:, K:]), y[:, K:]))

    torch.manual_seed(seed)
    model = ANIL(5, cfg["hidden"], cfg["inner_steps"], cfg["inner_lr"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches,
                steps=cfg["steps"])
