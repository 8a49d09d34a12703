"""Healthy: arrival-manager runway-assignment scorer (pointer-style attention over candidate
runways) with closed / wind-limited runways masked to -inf before the cross-entropy.

What a naive monitor might flag: the logits tensor contains ``-inf`` for every runway that is
closed by NOTAM or whose tail-wind/cross-wind component exceeds the limit; the masked entries
get exactly zero probability and exactly zero gradient. The controller's choice (the
target) is never a masked runway and every airport keeps at least one open runway, so
``cross_entropy`` only ever sees finite log-probabilities for the targets: no NaN, no inf in
the loss, and the model learns.

Model: a pointer scorer: the flight (arrival fix bearing, aircraft category, wake
class, ETA slot, taxi-in preference) is embedded as a query; each candidate runway (heading
sin/cos, length, head-wind and cross-wind component, exit-to-gate distance, current arrival
queue) is embedded as a key (two small MLPs); scores are scaled dot products.
Cross-entropy over the 4-8 runways of the airport; AdamW.

ORIGIN: None - nothing fails.
Fix: none needed (healthy); ``fixed=True`` returns the same run.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Pointer networks (Vinyals et al. 2015) with -inf masking of infeasible choices, as in "
          "attention-based routing/assignment models (Kool et al. 2019); runway assignment in "
          "arrival management (AMAN) decision support.")


class RunwayPointer(nn.Module):
    def __init__(self, d_flight, d_rwy, d):
        super().__init__()
        self.q = nn.Sequential(nn.Linear(d_flight, d), nn.ReLU(), nn.Linear(d, d))
        self.k = nn.Sequential(nn.Linear(d_rwy, d), nn.ReLU(), nn.Linear(d, d))
        self.d = d

    def forward(self, flight, rwys, open_mask):
        q = self.q(flight)[:, None]                                    # (B, 1, d)
        k = self.k(rwys)                                               # (B, R, d)
        scores = (q * k).sum(-1) / math.sqrt(self.d)
        return scores.masked_fill(~open_mask, float("-inf"))


def _arrivals(g, n, R):
    fix = torch.rand(n, generator=g) * 2 * math.pi
    cat = torch.randint(0, 3, (n,), generator=g)
    flight = torch.stack([torch.cos(fix), torch.sin(fix), F.one_hot(cat, 3).float()[:, 0],
                          F.one_hot(cat, 3).float()[:, 1], F.one_hot(cat, 3).float()[:, 2],
                          torch.rand(n, generator=g) - 0.5, torch.randn(n, generator=g)], 1)
    hdg = torch.rand(n, R, generator=g) * 2 * math.pi
    length = torch.rand(n, R, generator=g)
    wind_dir = torch.rand(n, 1, generator=g) * 2 * math.pi
    wind = 0.5 + torch.rand(n, 1, generator=g)
    head = wind * torch.cos(wind_dir - hdg)
    cross = (wind * torch.sin(wind_dir - hdg)).abs()
    gate = torch.rand(n, R, generator=g)
    queue = torch.rand(n, R, generator=g)
    rwys = torch.stack([torch.cos(hdg), torch.sin(hdg), length, head, cross, gate, queue], -1)
    notam = torch.rand(n, R, generator=g) < 0.25
    open_mask = ~notam & (head > -0.6) & (cross < 1.2)
    open_mask[torch.arange(n), torch.argmax(head, 1)] = True          # best-aligned always usable
    # controller's choice: aligned with the arrival fix, long enough for heavies, short queue
    align = torch.cos(fix[:, None] - hdg)
    utility = (1.2 * align + 1.0 * head + 1.5 * length * (cat[:, None] == 2) - 1.2 * queue
               - 0.6 * gate * flight[:, 5:6] + 0.3 * torch.randn(n, R, generator=g))
    target = utility.masked_fill(~open_mask, float("-inf")).argmax(1)
    return (flight, rwys, open_mask), target


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2727 + seed)
    R = [4, 6, 8][seed % 3]
    d = [32, 64, 48][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 150
    model = RunwayPointer(7, 7, d)
    batches = [_arrivals(g, bs, R) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
