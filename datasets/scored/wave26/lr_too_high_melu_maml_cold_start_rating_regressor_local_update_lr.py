"""MeLU-style meta-learned cold-start recommender (Lee et al., KDD 2019): an MLP rating estimator over
item content embeddings is adapted to each new user with a few differentiable local SGD updates on
the user's support ratings (MAML, second-order), and the adapted estimator is scored on the user's
query ratings; the global (outer) update is Adam on the query MSE.

Mechanism: the local-update learning rate was set to alpha = 0.4-0.6, in the range used for the
one-step Omniglot classifier, instead of the tiny values MeLU uses for its MSE estimator.  With
ReLU hidden activations of O(1) over 128-192 units, the curvature of the support MSE along the last
layer is ~ sum_j h_j^2 ~ 60-100, so each local step multiplies the residual by |1 - alpha*lambda| >> 1:
5-8 local steps grow the adapted weights, the query predictions and the second-order
meta-gradient geometrically.  The query loss is inf/NaN at the first outer iteration.

ORIGIN: None -- the failure is the inner (local-update) learning rate, an optimisation
hyper-parameter, not a module.

Fix: local-update learning rate alpha = 0.005 (stable for that curvature); same estimator, number of
local steps, data and outer optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Lee et al. 2019 'MeLU: Meta-Learned User Preference Estimator for Cold-Start "
          "Recommendation' (MAML local updates on an MSE rating estimator); Antoniou et al. 2019 "
          "'How to train your MAML' on inner-loop instability; learn2learn/higher issues "
          "'MAML regression loss explodes with larger inner lr'")


class Estimator(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, h)
        self.out = nn.Linear(h, 1)

    def forward(self, x):
        return self.out(F.relu(self.fc2(F.relu(self.fc1(x))))).squeeze(-1)


class MeLU(nn.Module):
    def __init__(self, d, h, alpha, local_steps):
        super().__init__()
        self.estimator = Estimator(d, h)
        self.alpha, self.local_steps = alpha, local_steps

    def forward(self, xs, ys, xq):
        # one user per row: xs (U, S, d), ys (U, S), xq (U, Q, d) -> query predictions (U, Q)
        out = []
        for u in range(xs.shape[0]):
            params = dict(self.estimator.named_parameters())
            for _ in range(self.local_steps):
                loss = F.mse_loss(functional_call(self.estimator, params, (xs[u],)), ys[u])
                grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
                params = {k: p - self.alpha * g for (k, p), g in zip(params.items(), grads)}
            out.append(functional_call(self.estimator, params, (xq[u],)))
        return torch.stack(out)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    alpha = [0.5, 0.4, 0.6][seed % 3]
    local_steps = [5, 6, 8][seed % 3]
    h = [128, 192, 160][seed % 3]
    users = [4, 3, 5][seed % 3]
    d, n_sup, n_qry, steps = 24, 10, 10, 100
    taste_basis = torch.randn(4, d, generator=g) / d ** 0.5
    quality = torch.randn(d, generator=g) / d ** 0.5                   # item appeal shared by users
    batches = []
    for _ in range(steps):
        XS, YS, XQ, YQ = [], [], [], []
        for _u in range(users):
            u = torch.randn(4, generator=g) @ taste_basis * 2.0       # user taste vector
            bias = 0.5 * torch.randn(1, generator=g)
            x = torch.randn(n_sup + n_qry, d, generator=g)             # item content embeddings
            r = (3.0 + bias + 1.5 * torch.tanh(2 * x @ quality) + 0.8 * torch.tanh(x @ u)
                 + 0.2 * torch.randn(n_sup + n_qry, generator=g))
            r = r.clamp(1.0, 5.0)
            XS.append(x[:n_sup]); YS.append(r[:n_sup]); XQ.append(x[n_sup:]); YQ.append(r[n_sup:])
        batches.append(((torch.stack(XS), torch.stack(YS), torch.stack(XQ)), torch.stack(YQ)))
    torch.manual_seed(seed)
    model = MeLU(d, h, 0.005 if fixed else alpha, local_steps)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
