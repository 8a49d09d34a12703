"""Tensor-program cost model (TVM/Ansor-style) -- deep ReLU MLP over schedule features,
every Linear re-initialised with ``nn.init.normal_(w, 0, 1)``.

Mechanism: the cost model regresses normalised log-throughput of candidate schedules from a
vector of loop-nest features (tile sizes, vectorisation, unroll, cache-read/write flags ...).
The author ported a TF1 snippet that used ``tf.random_normal`` (stddev 1.0) as the weight
initialiser.  With fan-in 64-128 a std-1 weight multiplies the activation scale by roughly
sqrt(fan_in/2) ~ 6-8 per ReLU layer, so after 5-7 layers the prediction is ~1e4-1e6 from
step 0, the MSE gradient is as large, and the first SGD step throws the weights to
astronomically large values: the loss overflows to inf/NaN within a few steps.

ORIGIN: ``net.0`` -- the first Linear is where the geometric growth of the activation scale
begins (every later layer only multiplies it further); it is the first module whose output is
already far off the unit scale expected of it.

Fix: He/kaiming-normal initialisation (std = sqrt(2/fan_in)) instead of normal_(0, 1), which keeps
the activation scale constant with depth; everything else (data, depth, lr, steps) is the same.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("TVM/Ansor-style learned cost model (Chen et al. 'Learning to Optimize Tensor Programs', "
          "NeurIPS 2018) re-implemented as an MLP; the std=1 normal initialiser is the classic "
          "tf.random_normal default pitfall discussed in Glorot & Bengio 2010 / He et al. 2015")


class CostModel(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [5, 6, 7][seed % 3]
    width = [128, 96, 112][seed % 3]
    lr = [0.015, 0.01, 0.008][seed % 3]
    bs = [64, 48, 80][seed % 3]
    steps = 120
    n_feat = 64

    torch.manual_seed(seed)
    layers, d = [], n_feat
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, 1))
    model = CostModel(layers)
    for m in model.net:
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)

    # synthetic schedule features -> log-throughput with interactions (tile x vectorise)
    w1 = torch.randn(n_feat, generator=g) / n_feat ** 0.5 * 1.7
    w2 = torch.randn(n_feat, generator=g) / n_feat ** 0.5
    batches = []
    for _ in range(steps):
        x = torch.rand(bs, n_feat, generator=g) * 2 - 1
        y = 1.5 + 1.5 * (x @ w1) + 0.5 * torch.relu(x @ w2) + 0.05 * torch.randn(bs, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
