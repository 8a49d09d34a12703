"""Deep Sets (phi -> masked mean -> rho) regressor of the picking time of a warehouse order batch.

Mechanism: the practitioner copied a Caffe-style ``weight_filler { type: "gaussian" std: 0.01 }``
initialiser onto every Linear of a 6-8 layer ReLU phi/rho network. Each layer multiplies the
activation scale by about 0.01*sqrt(fan_in/2) ~ 0.05, so the pooled set representation and the
prediction are ~1e-8 of the target scale at step 0, and the backward signal shrinks by the same
factor per layer. The only parameter that receives a usable gradient is the output bias, which can
only learn the mean of the standardised target (~0): the MSE sits at ~1 for the whole run while the
same network with a fan-in scaled init fits the batch pick times.

ORIGIN: ``phi.0`` -- the first Linear in forward order; the geometric shrinkage starts at the
first layer and compounds through every following one (all share the same bad init).

Fix: Kaiming-normal (fan_in, ReLU gain) init for the ReLU layers and Xavier for the output layer.
Model, data, optimiser, learning rate and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "phi.0"
SOURCE = ("Zaheer et al. 'Deep Sets' (2017) phi/rho architecture; known pattern of Caffe "
          "gaussian std=0.01 fillers on deep ReLU nets (He et al. 2015 'Delving deep into "
          "rectifiers' show such nets fail to train beyond a few layers)")


def _mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class PickTimeDeepSets(nn.Module):
    def __init__(self, f, h, phi_depth, rho_depth):
        super().__init__()
        self.phi = _mlp([f] + [h] * phi_depth)
        self.rho = _mlp([h] * (rho_depth + 1))
        self.out = nn.Linear(h, 1)

    def forward(self, items, mask):
        z = self.phi(items) * mask.unsqueeze(-1)      # (B, N, h), padded lines zeroed
        pooled = z.sum(1) / mask.sum(1, keepdim=True)  # masked mean over order lines
        return self.out(self.rho(pooled)).squeeze(-1)


def _batches(g, steps, bs, nmax, stats=None):
    out = []
    for _ in range(steps):
        n_lines = torch.randint(3, nmax + 1, (bs,), generator=g)
        mask = (torch.arange(nmax).unsqueeze(0) < n_lines.unsqueeze(1)).float()
        aisle = torch.randint(0, 20, (bs, nmax), generator=g).float()
        bay = torch.rand(bs, nmax, generator=g) * 30
        level = torch.randint(0, 5, (bs, nmax), generator=g).float()
        qty = torch.randint(1, 12, (bs, nmax), generator=g).float()
        kg = torch.rand(bs, nmax, generator=g) * 8
        # S-shape route: distinct aisles visited * aisle length + farthest aisle + handling
        visited = torch.zeros(bs, 20).scatter_(1, aisle.long(), mask).clamp(max=1).sum(1)
        far = (aisle * mask).amax(1)
        handle = ((4 + 1.5 * qty + 2 * level + 0.8 * kg) * mask).sum(1)
        t = 30 * visited + 6 * far + handle + (bay * mask).amax(1)
        cnt = (n_lines.float() / nmax).unsqueeze(1).expand(bs, nmax)
        items = torch.stack([aisle / 10 - 1, bay / 15 - 1, level / 2 - 1, qty / 6 - 1, kg / 4 - 1, cnt], -1)
        out.append(((items * mask.unsqueeze(-1), mask), t))
    ts = torch.cat([b[1] for b in out])
    mu, sd = ts.mean(), ts.std()
    return [(x, (t - mu) / sd) for x, t in out]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [64, 96, 48][seed % 3]
    phi_depth = [3, 4, 3][seed % 3]
    rho_depth = [3, 3, 4][seed % 3]
    bs = [32, 48, 24][seed % 3]
    lr = [0.01, 0.005, 0.01][seed % 3]
    nmax = [12, 16, 10][seed % 3]
    steps = 200
    torch.manual_seed(seed)
    model = PickTimeDeepSets(6, h, phi_depth, rho_depth)
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            if fixed:
                if mod is model.out:
                    nn.init.xavier_uniform_(mod.weight)
                else:
                    nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
            else:
                nn.init.normal_(mod.weight, 0.0, 0.01)         # caffe gaussian filler
            nn.init.zeros_(mod.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = _batches(g, steps, bs, nmax)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
