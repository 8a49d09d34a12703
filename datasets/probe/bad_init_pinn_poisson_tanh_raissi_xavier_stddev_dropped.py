"""Physics-informed network (Raissi et al. 2019 style) for a 1-D Poisson problem
-u''(x) = f(x) on [0, 1], u(0) = u(1) = 0, with a deep tanh MLP.  The residual
u'' is obtained with autograd inside forward(); loss = mean residual^2 +
boundary penalty, optimised with Adam.

Mechanism: the layers are hand-written ports of Raissi's TF1 ``xavier_init``,
``tf.Variable(tf.truncated_normal([in_dim, out_dim], stddev=xavier_stddev))``,
but the ``stddev=`` argument was dropped, so every weight matrix is drawn with
std 1 instead of sqrt(2/(fan_in+fan_out)).  With 32-48 units each layer
multiplies pre-activation scale by ~sqrt(width) (~6), all hidden tanh units sit
in saturation from step 0 and the network is a wildly oscillating function of x:
its second derivative is orders of magnitude larger than f, the residual loss
starts astronomically high and Adam cannot bring the over-scaled weights back
into the useful range, so the loss plateaus far above the fixed run.

ORIGIN is ``layers.0``: the first unscaled matrix; every later layer multiplies
the excess again (geometric growth with depth).

Fix: restore the Xavier stddev (Glorot-normal init), nothing else.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Port of Raissi's PINNs TF1 code (xavier_init with tf.truncated_normal) "
          "where the stddev argument was lost; PINN training stagnation from poor init")


class Dense(nn.Module):
    def __init__(self, fan_in, fan_out, std):
        super().__init__()
        w = torch.empty(fan_in, fan_out)
        nn.init.trunc_normal_(w, std=std, a=-2 * std, b=2 * std)
        self.W = nn.Parameter(w)
        self.b = nn.Parameter(torch.zeros(fan_out))

    def forward(self, x):
        return x @ self.W + self.b


class PoissonPINN(nn.Module):
    def __init__(self, width, depth, xavier):
        super().__init__()
        dims = [1] + [width] * depth + [1]
        self.layers = nn.ModuleList()
        for a, b in zip(dims[:-1], dims[1:]):
            std = math.sqrt(2.0 / (a + b)) if xavier else 1.0
            self.layers.append(Dense(a, b, std))
        self.act = nn.Tanh()

    def u(self, x):
        h = 2.0 * x - 1.0                      # map [0,1] -> [-1,1]
        for layer in self.layers[:-1]:
            h = self.act(layer(h))
        return self.layers[-1](h)

    def forward(self, x):
        x = x.clone().requires_grad_(True)
        u = self.u(x)
        du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
        d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
        xb = torch.tensor([[0.0], [1.0]])
        ub = self.u(xb)
        return torch.cat([-d2u, ub], dim=0)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=40, depth=5, n=64, lr=1e-3, steps=150, k=2.0),
        dict(width=32, depth=6, n=48, lr=2e-3, steps=120, k=1.0),
        dict(width=48, depth=4, n=96, lr=1e-3, steps=160, k=3.0),
    ][seed % 3]
    g = torch.Generator().manual_seed(500 + seed)
    k = cfg["k"]

    def f(x):  # exact solution u = sin(k pi x) + 0.5 sin(pi x) x
        return (k * math.pi) ** 2 * torch.sin(k * math.pi * x) + 0.5 * math.pi ** 2 * torch.sin(math.pi * x)

    torch.manual_seed(seed)
    model = PoissonPINN(cfg["width"], cfg["depth"], xavier=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def loss_fn(out, target):
        n = target.shape[0] - 2
        res = out[:n] - target[:n]
        bc = out[n:] - target[n:]
        return (res ** 2).mean() + 10.0 * (bc ** 2).mean()

    batches = []
    for _ in range(cfg["steps"]):
        x = torch.rand(cfg["n"], 1, generator=g)
        y = torch.cat([f(x), torch.zeros(2, 1)], dim=0)
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
