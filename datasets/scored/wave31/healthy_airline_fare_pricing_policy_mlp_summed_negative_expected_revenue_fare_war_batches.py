"""Dynamic-pricing policy for airline fares: an ELU MLP maps booking-state features (days to
departure, load factor, competitor fare, demand index, weekend flag) to a fare; a differentiable
logit purchase model turns the fare into expected bookings, and the loss is the *negative summed
expected revenue* of the batch (in dollars). Trained with Adam.

Why it looks alarming but is healthy: the loss is negative from the first step and of order -1e4 to
-1e5 (a sum over the batch, in dollars, not a mean), it becomes *more* negative as the policy learns,
and on a few seed-dependent 'fare-war' batches, where the competitor undercuts by 40 %, the
attainable revenue collapses and the loss jumps up by tens of percent before returning to its trend
on the next normal batch. The per-step gradient norm is large in absolute terms for the same reason
(summed dollars). None of this is a failure: there is no overflow, the fare stays in a sensible
range, and expected revenue per batch rises steadily.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Revenue-management pricing with a logit (MNL) purchase model (Talluri & van Ryzin, 'The "
          "Theory and Practice of Revenue Management'); end-to-end 'predict-and-optimise' pricing "
          "policies trained on negative expected revenue")


class FarePolicy(nn.Module):
    def __init__(self, h, depth):
        super().__init__()
        layers, d = [], 5
        for _ in range(depth):
            layers += [nn.Linear(d, h), nn.ELU()]
            d = h
        self.net = nn.Sequential(*layers, nn.Linear(d, 1))

    def forward(self, x):
        return 60.0 + 100.0 * F.softplus(self.net(x)).squeeze(-1)        # fare in dollars


def negative_expected_revenue(fare, ctx):
    arrivals, wtp_shift, comp, seats_left = ctx.unbind(-1)
    # MNL choice between our fare, the competitor's and not flying
    u_us = wtp_shift - fare / 80.0
    u_comp = wtp_shift - comp / 80.0 - 0.3
    p_buy = torch.exp(u_us) / (1 + torch.exp(u_us) + torch.exp(u_comp))
    bookings = torch.minimum(arrivals * p_buy, seats_left)
    return -(fare * bookings).sum()


def _states(g, bs, fare_war):
    dtd = torch.randint(1, 120, (bs,), generator=g).float()             # days to departure
    load = torch.rand(bs, generator=g) * 0.9
    demand_idx = torch.rand(bs, generator=g) * 2
    weekend = (torch.rand(bs, generator=g) < 0.3).float()
    comp = 150 + 150 * torch.rand(bs, generator=g) * (1 + 0.5 * demand_idx) * (1 - dtd / 240)
    if fare_war:
        comp = comp * 0.6
    arrivals = 5 + 10 * demand_idx * (1 + weekend)
    wtp_shift = 2.5 + 1.2 * demand_idx + 1.5 * (1 - dtd / 120) + 0.5 * weekend
    seats_left = (1 - load) * 40
    x = torch.stack([dtd / 60 - 1, load * 2 - 0.9, comp / 150 - 1.5, demand_idx - 1, weekend], 1)
    return x, torch.stack([arrivals, wtp_shift, comp, seats_left], -1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [64, 32, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [128, 96, 160][seed % 3]
    lr = [3e-3, 5e-3, 2e-3][seed % 3]
    steps = 150
    war_steps = {[40, 90, 130][seed % 3], [41, 60, 131][seed % 3], [100, 61, 75][seed % 3]}
    batches = [_states(g, bs, s in war_steps) for s in range(steps)]
    torch.manual_seed(seed)
    model = FarePolicy(h, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=negative_expected_revenue, batches=batches, steps=steps)
