"""DeepONet for an antiderivative operator: a branch net reads the input function at sensor points,
a trunk net reads the query location, and the output is their dot product. The branch net is
initialised with N(0, 1) weights (a TF1 'random_normal' default), so through its stacked ReLU layers
the activation scale grows by ~sqrt(fan_in/2) per layer; the dot-product output starts at ~1e4-1e6
times the target scale and plain SGD overshoots into inf/NaN. Fix: Kaiming/Xavier init of the branch."""
import torch, torch.nn as nn
CAUSE = "bad_init"
ORIGIN = "branch.0"
SOURCE = "DeepONet (Lu et al. 2021) antiderivative example; TF1 tf.random_normal default stddev=1.0 init pitfall"
class DeepONet(nn.Module):
    def __init__(s, m, h, p, depth):
        super().__init__()
        L = [nn.Linear(m, h), nn.ReLU()]
        for _ in range(depth - 1): L += [nn.Linear(h, h), nn.ReLU()]
        L += [nn.Linear(h, p)]; s.branch = nn.Sequential(*L)
        s.trunk = nn.Sequential(nn.Linear(1, h), nn.Tanh(), nn.Linear(h, p), nn.Tanh())
        s.b0 = nn.Parameter(torch.zeros(1))
    def forward(s, u, y):
        return (s.branch(u) * s.trunk(y)).sum(-1) + s.b0
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    m, h, p, depth = 32, 40 + 8 * seed, 24, 4 + seed
    steps, bs = 100, 64
    model = DeepONet(m, h, p, depth)
    for mod in model.branch:
        if isinstance(mod, nn.Linear):
            if fixed: nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
            else: nn.init.normal_(mod.weight, std=1.0)
            nn.init.zeros_(mod.bias)
    xs = torch.linspace(0, 1, m)
    batches = []
    for _ in range(steps):
        a = torch.randn(bs, 3, generator=g); f = torch.randn(bs, 3, generator=g)
        u = (a[:, :, None] * torch.sin(f[:, :, None] * 3 * xs[None, None, :] + 1)).sum(1)
        y = torch.rand(bs, 1, generator=g)
        target = (u.cumsum(1) / m)[torch.arange(bs), (y[:, 0] * (m - 1)).long()]
        batches.append(((u, y), target))
    opt = torch.optim.SGD(model.parameters(), lr=2e-3, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
