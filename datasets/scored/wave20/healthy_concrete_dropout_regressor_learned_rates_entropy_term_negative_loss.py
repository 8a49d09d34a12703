"""Concrete dropout regressor (Gal, Hron & Kendall 2017): every hidden layer has a learned dropout
probability p = sigmoid(p_logit) with a relaxed Bernoulli (concrete, temperature 0.1) mask, the
model has a heteroscedastic head (mean, log variance), and the loss is Gaussian NLL + the
concrete-dropout regulariser  sum_l [ w_reg * |W_l|^2 / (1-p_l) - d_reg * K_l * H(p_l) ].

Why it looks alarming but is fine: the dropout-entropy term is *subtracted* and scaled by the
layer width, so the total loss is negative from the first step and can drift further below zero;
the stochastic masks make consecutive minibatch losses jump up and down by a large fraction;
the dropout rates themselves wander during the run.  The NLL part decreases steadily and the run
is healthy.
ORIGIN: None (healthy run).  `fixed` builds the identical run."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Gal, Hron & Kendall 2017 'Concrete Dropout' (yaringal/ConcreteDropout reference implementation)"


class ConcreteDropout(nn.Module):
    def __init__(self, layer, w_reg, d_reg, init_p=0.2, temp=0.1):
        super().__init__()
        self.layer = layer
        self.p_logit = nn.Parameter(torch.tensor(math.log(init_p) - math.log(1 - init_p)))
        self.w_reg, self.d_reg, self.temp = w_reg, d_reg, temp

    def forward(self, x):
        p = torch.sigmoid(self.p_logit)
        eps = 1e-7
        u = torch.rand_like(x)
        drop = torch.sigmoid((torch.log(p + eps) - torch.log(1 - p + eps) + torch.log(u + eps)
                              - torch.log(1 - u + eps)) / self.temp)
        out = self.layer(x * (1 - drop) / (1 - p))
        w2 = sum((q ** 2).sum() for q in self.layer.parameters())
        ent = -(p * torch.log(p + eps) + (1 - p) * torch.log(1 - p + eps))
        self.reg = self.w_reg * w2 / (1 - p) - self.d_reg * x.shape[1] * ent
        return out


class ConcreteDropoutRegressor(nn.Module):
    def __init__(self, d_in, width, n_train, tau=0.02, length_scale=1e-2):
        super().__init__()
        # reference recipe: weight_regularizer = l^2 / (tau N), dropout_regularizer = 2 / (tau N)
        w_reg, d_reg = length_scale ** 2 / (tau * n_train), 2.0 / (tau * n_train)
        self.cd1 = ConcreteDropout(nn.Linear(d_in, width), w_reg, d_reg)
        self.act1 = nn.ReLU()
        self.cd2 = ConcreteDropout(nn.Linear(width, width), w_reg, d_reg)
        self.act2 = nn.ReLU()
        self.cd_mu = ConcreteDropout(nn.Linear(width, 1), w_reg, d_reg)
        self.cd_lv = ConcreteDropout(nn.Linear(width, 1), w_reg, d_reg)

    def forward(self, x):
        h = self.act2(self.cd2(self.act1(self.cd1(x))))
        mu, lv = self.cd_mu(h), self.cd_lv(h)
        reg = self.cd1.reg + self.cd2.reg + self.cd_mu.reg + self.cd_lv.reg
        return mu, lv, reg


def loss_fn(out, y):
    mu, lv, reg = out
    nll = 0.5 * (lv + (y - mu) ** 2 / lv.exp()).mean()
    return nll + reg


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = 4
    width = [64, 128, 96][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = [3e-3, 2e-3, 3e-3][seed % 3]
    n_train = [500, 1000, 800][seed % 3]
    steps = 120
    model = ConcreteDropoutRegressor(d_in, width, n_train)
    w = torch.randn(d_in, 1, generator=g)
    X = torch.randn(n_train, d_in, generator=g)
    Y = torch.sin(X @ w) + (0.05 + 0.2 * X[:, :1].abs()) * torch.randn(n_train, 1, generator=g)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n_train, (bs,), generator=g)
        batches.append((X[idx], Y[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
