"""Deep-equilibrium (DEQ) classifier whose weight-tied recurrent matrix is initialised N(0, 1).

Mechanism: the DEQ layer solves z* = relu(W z* + U x + b) by plain forward (Picard)
iteration (no gradient through the solver) and trains with the Jacobian-free / one-step
"phantom" gradient (one extra application of f at the fixed point).  The iteration only
converges when z -> relu(W z + .) is a contraction.  The implicit-layers tutorial initialises
W with `weight.data.normal_(0, 0.01)`; here the std argument was dropped, so W ~ N(0, 1) with
spectral radius ~ sqrt(d).  Every solver iteration multiplies the hidden state by ~sqrt(d/2)
(4-6x): the activation scale grows geometrically with solver "depth" from the very first
forward, the state passes float32 range inside the no-grad solver loop (50-75 iterations)
and the loss is inf/NaN at step 0.

ORIGIN: `f.recur`, the weight-tied recurrent Linear whose init is wrong; everything else
(injection, head) has default init.

Fix: initialise the recurrent weight the way the DEQ recipe does, N(0, 0.01) (a contraction),
so the solver converges in a handful of iterations.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "f.recur"
SOURCE = ("Kolter/Duvenaud/Johnson 'Deep Implicit Layers' NeurIPS 2020 tutorial ch.4 (DEQ with "
          "weight.data.normal_(0, 0.01)); locuslab/deq issues about the forward solver diverging "
          "when the layer is not contractive at init")


class DEQCell(nn.Module):
    """f(z, x) = relu(W z + U x + b)."""

    def __init__(self, d_in, d):
        super().__init__()
        self.inject = nn.Linear(d_in, d)
        self.recur = nn.Linear(d, d, bias=False)
        self.act = nn.ReLU()

    def forward(self, z, x):
        return self.act(self.recur(z) + self.inject(x))


class DEQClassifier(nn.Module):
    def __init__(self, d_in, d, n_cls, max_iter, tol=1e-4):
        super().__init__()
        self.f = DEQCell(d_in, d)
        self.head = nn.Linear(d, n_cls)
        self.d, self.max_iter, self.tol = d, max_iter, tol

    def forward(self, x):
        z = x.new_zeros(x.shape[0], self.d)
        with torch.no_grad():                       # forward solver, no graph
            for _ in range(self.max_iter):
                z_next = self.f(z, x)
                res = (z_next - z).norm() / (z_next.norm() + 1e-6)
                z = z_next
                if res < self.tol:
                    break
        z = self.f(z, x)                            # one-step (Jacobian-free) gradient
        return self.head(z)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=48, max_iter=60, lr=1e-3, bs=64, steps=120),
           dict(d=64, max_iter=50, lr=2e-3, bs=96, steps=100),
           dict(d=40, max_iter=75, lr=1e-3, bs=48, steps=140)][seed % 3]
    g = torch.Generator().manual_seed(1000 + seed)
    d_in, n_cls = 20, 6
    # gaussian-mixture classification data with a nonlinear twist
    centers = torch.randn(n_cls, d_in, generator=g) * 1.5
    n = cfg["bs"] * cfg["steps"]
    yall = torch.randint(0, n_cls, (n,), generator=g)
    xall = centers[yall] + torch.randn(n, d_in, generator=g)
    xall = torch.tanh(xall) * 2.0
    xall = (xall - xall.mean(0)) / xall.std(0)

    torch.manual_seed(seed)
    model = DEQClassifier(d_in, cfg["d"], n_cls, cfg["max_iter"])
    with torch.no_grad():
        if fixed:
            model.f.recur.weight.normal_(0, 0.01)
        else:
            model.f.recur.weight.normal_()          # BUG: std argument dropped -> N(0, 1)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    bs = cfg["bs"]
    batches = [(xall[i * bs:(i + 1) * bs], yall[i * bs:(i + 1) * bs]) for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=cfg["steps"])
