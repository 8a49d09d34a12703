"""A token-level top-1 mixture-of-experts regressor (Switch-style router, four ReLU-MLP experts, mean
pooling over a sequence of sensor events) trained with SGD + momentum on standardised event
features. One batch midway through the run comes from a logger whose ADC saturated: a few events in
it carry the raw full-scale code 32767 instead of a standardised value. Those tokens give activations
and a squared error many orders of magnitude above normal; the single update from that batch (kept
alive by momentum for the following steps) throws the input embedding, router and expert weights far
away, the activations and predictions explode and within a few steps the loss is inf/NaN. Clipping
the corrupt readings of that batch to the valid standardised range gives a normal run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "embed"
SOURCE = ("sensor/ADC saturation codes (e.g. int16 full scale 32767) leaking into a standardised "
          "training stream; one bad batch destabilises SGD training (common forum report pattern)")

F_IN, D, N_EXP, T = 5, 16, 4, 20


class Top1MoE(nn.Module):
    def __init__(self, d, n_exp, hidden=32):
        super().__init__()
        self.router = nn.Linear(d, n_exp)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, d))
                                      for _ in range(n_exp)])

    def forward(self, x):                                   # x: (N, d)
        probs = torch.softmax(self.router(x), -1)
        gate, idx = probs.max(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            sel = idx == e
            if sel.any():
                out[sel] = gate[sel].unsqueeze(-1) * expert(x[sel])
        return out, probs


class MoERegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(F_IN, D)
        self.moe = Top1MoE(D, N_EXP)
        self.head = nn.Linear(D, 1)

    def forward(self, x):
        B, T_, _ = x.shape
        h = self.embed(x)
        m, router_probs = self.moe(h.reshape(B * T_, D))
        h = h + m.view(B, T_, D)
        return self.head(h.mean(1)).squeeze(-1), router_probs.view(B, T_, -1)


def make_batch(g, bs, w):
    x = torch.randn(bs, T, F_IN, generator=g)
    y = (torch.relu(x @ w) - 0.4).mean(1) * 3.0
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MoERegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    w = torch.randn(F_IN, generator=g)
    steps, bad_step = 150, 60
    batches = []
    for step in range(steps):
        x, y = make_batch(g, 32, w)
        if step == bad_step:
            rows = torch.randint(0, 32, (3,), generator=g)
            cols = torch.randint(0, T, (3,), generator=g)
            x[rows, cols, 2] = 32767.0                      # saturated ADC code leaks in raw
            if fixed:
                x = x.clamp(-5.0, 5.0)                      # fix: clip to the valid standardised range
        batches.append((x, y))
    loss_fn = lambda out, y: F.mse_loss(out[0], y)         # out = (prediction, router probabilities)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
