"""Learned optimiser (L2O) meta-training: a coordinate-wise MLP optimiser unrolled on random,
ill-conditioned least-squares problems; the optimiser's output projection is initialised N(0, 1).

Mechanism: every training step samples an optimizee problem min_theta ||X theta - y||^2 / n,
unrolls `unroll` steps theta <- theta + 0.1 * opt_net([g, m]) (Andrychowicz et al. 2016,
second derivatives of the optimizee dropped) and the meta-loss is the mean optimizee loss
along the trajectory, relative to the starting loss.  The trunk is He-initialised, but the
port of a TF1 implementation kept `tf.random_normal_initializer()` (stddev=1.0 by default) for
the final projection `opt_net.head`.  At initialisation the learned step is then ~g * O(1)
with an arbitrary sign per coordinate, instead of ~0: every unrolled step multiplies the
optimizee error by a factor well above 1, the error grows geometrically with unroll depth
from the very first meta-step and the meta-loss overflows (inf, then NaN everywhere).

ORIGIN: `opt_net.head`, the only badly initialised layer (the trunk uses kaiming init).

Fix: initialise the head small, N(0, 0.01) (the usual L2O recipe: the untrained optimiser
makes near-zero steps and meta-training grows them), so the unroll starts stable.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "opt_net.head"
SOURCE = ("Andrychowicz et al. 2016 'Learning to learn by gradient descent by gradient descent' "
          "(quadratic optimizee, dropped second derivatives); PyTorch ports of the TF1 code that "
          "keep tf.random_normal_initializer() stddev=1.0 for the output projection")


class CoordinatewiseMLP(nn.Module):
    def __init__(self, n_feat, hidden):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(),
                                   nn.Linear(hidden, hidden), nn.ReLU())
        for m in self.trunk:
            if isinstance(m, nn.Linear):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
        self.head = nn.Linear(hidden, 1)

    def forward(self, feats):                     # feats: (n_coords, n_feat)
        return self.head(self.trunk(feats)).squeeze(-1)


class L2OMetaTrainer(nn.Module):
    def __init__(self, hidden, unroll, out_scale=0.1, beta=0.9):
        super().__init__()
        self.opt_net = CoordinatewiseMLP(2, hidden)
        self.unroll, self.out_scale, self.beta = unroll, out_scale, beta

    def forward(self, X, y):
        theta = X.new_zeros(X.shape[1], requires_grad=True)
        m = torch.zeros_like(theta)
        losses = []
        loss0 = ((X @ theta - y) ** 2).mean().detach()
        for _ in range(self.unroll):
            loss_t = ((X @ theta - y) ** 2).mean()
            losses.append(loss_t / loss0 if losses else loss_t / loss_t.detach())
            g, = torch.autograd.grad(loss_t, theta, retain_graph=True)
            g = g.detach()                        # drop second derivatives (as in the paper)
            m = self.beta * m + (1 - self.beta) * g
            step = self.opt_net(torch.stack([g, m], dim=-1))     # learned per-coordinate update
            theta = theta + self.out_scale * step
        return torch.stack(losses)


def meta_loss(traj_losses, weights):
    return (traj_losses * weights).sum()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(p=10, n=20, hidden=32, unroll=40, lr=3e-3, steps=80),
           dict(p=16, n=32, hidden=24, unroll=30, lr=3e-3, steps=60),
           dict(p=8, n=24, hidden=40, unroll=50, lr=2e-3, steps=70)][seed % 3]
    g = torch.Generator().manual_seed(77 + seed)
    batches = []
    w = torch.full((cfg["unroll"],), 1.0 / cfg["unroll"])
    for _ in range(cfg["steps"]):
        col_scale = 0.5 + 2.5 * torch.rand(cfg["p"], generator=g)     # ill-conditioned problems
        X = torch.randn(cfg["n"], cfg["p"], generator=g) * col_scale
        w_star = torch.randn(cfg["p"], generator=g)
        y = X @ w_star + 0.05 * torch.randn(cfg["n"], generator=g)
        batches.append(((X, y), w))

    torch.manual_seed(seed)
    model = L2OMetaTrainer(cfg["hidden"], cfg["unroll"])
    with torch.no_grad():
        if fixed:
            nn.init.normal_(model.opt_net.head.weight, 0.0, 0.01)
        else:
            nn.init.normal_(model.opt_net.head.weight, 0.0, 1.0)   # BUG: TF1 default stddev=1.0
        model.opt_net.head.bias.zero_()
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=meta_loss, batches=batches,
                steps=cfg["steps"])
