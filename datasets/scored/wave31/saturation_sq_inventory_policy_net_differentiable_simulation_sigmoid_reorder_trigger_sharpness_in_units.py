"""Policy network for (s, Q) inventory control trained end-to-end through a differentiable simulation.

An MLP maps each SKU's features (mean demand, CV, holding and backorder cost) to a safety factor z;
the reorder point is s = mu * L + z * sigma * sqrt(L). A vectorised simulation over T periods with
lead time L replaces the hard trigger "order Q when inventory position <= s" by
sigmoid(k * (s - IP)) * Q, and the loss is the average holding + backorder cost per period divided by
the SKU's holding cost of one period of mean demand (the target, h * mu).

Mechanism: the sharpness was set to k = 25-50 "so the relaxation is almost the hard policy", copied
from the unit-demand toy where the inventory position moves in steps of ~0.1. Here demand is in
units of 20-150 per period, so k * (s - IP) is +-100s on almost every period: the sigmoid is 0 or 1 to
float precision and its derivative sigmoid * (1 - sigmoid) is ~0, so on most steps the policy gets
(almost) no gradient. On the rare period where IP lands inside the ~0.1-unit-wide band, the
derivative is k/4 * Q -- hundreds of times a normal gradient -- and one such spike throws the safety
factor (SGD+momentum) far into a region where the trigger is saturated on *every* period (never or
always order). There the gradient is exactly zero, and the cost stays at a far worse level than at
the start for the rest of the run.

ORIGIN: ``sim.trigger`` -- the scaled sigmoid whose saturation stops the gradient; the MLP before it
is healthy.

Fix: express the sharpness per unit of lead-time demand standard deviation, k = 2 / (sigma * sqrt(L)),
so the sigmoid's argument is O(1); network, simulation, optimiser, lr and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "sim.trigger"
SOURCE = ("Differentiable-simulation inventory policies (e.g. Madeka et al. 'Deep Inventory Management' "
          "2022; Alvo et al. 'Neural inventory control in networks via hindsight differentiable policy "
          "optimization' 2023); known pattern of a sigmoid relaxation whose temperature is not on the "
          "scale of its argument and saturates")


class ReorderTrigger(nn.Module):
    """Soft 'inventory position below reorder point' indicator."""

    def __init__(self, k_abs, scale_free):
        super().__init__()
        self.k_abs = k_abs
        self.scale_free = scale_free

    def forward(self, s, ip, sig_lt):
        k = 2.0 / sig_lt if self.scale_free else self.k_abs
        return torch.sigmoid(k * (s - ip))


class SQSimulator(nn.Module):
    def __init__(self, T, L, k_abs, scale_free):
        super().__init__()
        self.T, self.L = T, L
        self.trigger = ReorderTrigger(k_abs, scale_free)

    def forward(self, s, demand, Q, mu, sig_lt, h, p):
        L = self.L
        inv = mu * L + Q                                   # starting on-hand (constant)
        pipe = [torch.zeros_like(mu) for _ in range(L)]
        cost = 0.0
        for t in range(self.T):
            inv = inv + pipe.pop(0) - demand[:, t]
            cost = cost + h * torch.relu(inv) + p * torch.relu(-inv)
            ip = inv + sum(pipe)
            pipe.append(self.trigger(s, ip, sig_lt) * Q)
        return cost / self.T


class InventoryPolicy(nn.Module):
    def __init__(self, hdim, depth, T, L, k_abs, scale_free):
        super().__init__()
        layers, d = [], 4
        for _ in range(depth):
            layers += [nn.Linear(d, hdim), nn.ReLU()]
            d = hdim
        self.policy = nn.Sequential(*layers, nn.Linear(d, 1))
        self.sim = SQSimulator(T, L, k_abs, scale_free)
        self.L = L

    def forward(self, feats, demand, Q, mu, sigma, h, p):
        z = self.policy(feats).squeeze(-1)                  # safety factor
        sig_lt = sigma * self.L ** 0.5
        s = mu * self.L + z * sig_lt
        return self.sim(s, demand, Q, mu, sig_lt, h, p)


def _skus(g, bs, T):
    mu = torch.rand(bs, generator=g) * 130 + 20
    cv = torch.rand(bs, generator=g) * 0.4 + 0.2
    sigma = mu * cv
    h = torch.rand(bs, generator=g) * 0.9 + 0.1
    p = h * (torch.rand(bs, generator=g) * 30 + 9)          # backorder / holding ratio 9..39
    Q = mu * (torch.rand(bs, generator=g) * 0.6 + 1.2)       # EOQ-style lot, 1.2-1.8 periods of demand
    shape = 1.0 / cv ** 2                                    # gamma demand
    demand = torch._standard_gamma(shape.unsqueeze(1).expand(bs, T).contiguous()) * (mu / shape).unsqueeze(1)
    feats = torch.stack([(mu - 85) / 38, (cv - 0.4) / 0.12, (h - 0.55) / 0.26, torch.log(p / h) - 3.0], 1)
    return (feats, demand, Q, mu, sigma, h, p), h * mu


def relative_cost(cost, h_mu):
    return (cost / h_mu).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)                                    # _standard_gamma uses the global RNG
    hdim = [32, 64, 48][seed % 3]
    depth = [2, 2, 3][seed % 3]
    bs = [256, 192, 320][seed % 3]
    lr = [0.004, 0.005, 0.003][seed % 3]
    k_abs = [50.0, 25.0, 40.0][seed % 3]
    T, L = 30, 2
    steps = 250
    batches = [_skus(g, bs, T) for _ in range(steps)]
    torch.manual_seed(seed)
    model = InventoryPolicy(hdim, depth, T, L, k_abs, scale_free=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=relative_cost, batches=batches, steps=steps)
