"""Link-utilisation predictor for a datacenter fabric (traffic-engineering what-if model): for
each link the set of flows routed over it (per-flow features: log demand, RTT class, priority,
burstiness ...) goes through a DeepSets network -- a per-flow MLP phi, a pooling over the set,
a readout MLP rho -- and a sigmoid gives the utilisation in [0, 1], trained with MSE against the
measured utilisation (SGD with momentum).

Mechanism: the set is pooled with ``sum``.  Links carry 100-250 flows, so the pooled vector is
~100x the per-flow scale, and so are rho's pre-activations and the gradients of the first
updates: within a few steps the pre-sigmoid logit is thrown tens of units away from 0.  The sigmoid sits at 0 or 1 where sigma' ~ e^-|z|, and
MSE (unlike BCE) does not cancel sigma': the gradient reaching the whole network is ~0.  The
prediction is stuck at 0/1 for every link and the loss plateaus; no NaN.

ORIGIN: ``head`` -- the final Linear feeding the sigmoid is where the logit becomes huge and
the output unit saturates.

Fix: ``mean`` pooling over the flows of a link (pre-activations back to O(1)); same model,
data, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "head"
SOURCE = ("DeepSets (Zaheer et al., NeurIPS 2017) applied to per-link flow sets, as in RouteNet "
          "(Rusek et al., SOSR 2019) style network performance models; sigmoid + MSE "
          "saturation (Glorot & Bengio 2010; 'sum pooling explodes with set size' reports)")


class LinkUtilDeepSets(nn.Module):
    def __init__(self, n_feat, hidden, pool):
        super().__init__()
        self.pool = pool
        self.phi = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, 1)

    def forward(self, flows):  # (links, flows, feat)
        h = self.phi(flows)
        h = h.sum(1) if self.pool == "sum" else h.mean(1)
        return torch.sigmoid(self.head(self.rho(h))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 96, 48][seed % 3]
    n_flows = [120, 200, 160][seed % 3]
    lr = [0.5, 0.3, 0.4][seed % 3]
    bs = [16, 24, 20][seed % 3]
    steps = 150
    n_feat = 5

    torch.manual_seed(seed)
    model = LinkUtilDeepSets(n_feat, hidden, "mean" if fixed else "sum")
    batches = []
    for _ in range(steps):
        demand = torch.randn(bs, n_flows, generator=g) * 0.5 + torch.randn(bs, 1, generator=g) * 0.8
        rtt = torch.randint(0, 3, (bs, n_flows), generator=g).float() - 1
        prio = (torch.rand(bs, n_flows, generator=g) < 0.3).float()
        burst = torch.rand(bs, n_flows, generator=g)
        elephant = (torch.rand(bs, n_flows, generator=g) < 0.05).float()
        x = torch.stack([demand, rtt, prio, burst, elephant], -1)
        load = (torch.exp(demand) * (1 + elephant)).mean(1)
        util = torch.sigmoid(2.0 * (load - 1.6))
        batches.append((x, util))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
