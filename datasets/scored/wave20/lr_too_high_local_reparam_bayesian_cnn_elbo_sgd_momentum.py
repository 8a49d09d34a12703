"""Bayesian CNN with mean-field Gaussian weights trained by variational inference using the local
reparameterisation trick (Kingma, Salimans & Welling 2015): each Bayesian conv/linear layer
samples its pre-activations from N(x*mu, x^2*sigma^2).  Loss = cross-entropy + KL(q||p)/N
(the negative ELBO per example), SGD with momentum.

Mechanism: the user raised the SGD lr to 'compensate for the noisy ELBO gradients'.  The update /
weight ratio of the posterior means is far above 1e-3; the means overshoot, logits blow up and the
cross-entropy becomes inf/NaN (or the sampled activations overflow) within a few dozen steps.
ORIGIN: None - a global lr problem.
Fix: a normal SGD lr (the only change)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Kingma et al. 2015 local reparameterisation; Bayesian CNN (Shridhar et al. 2019) diverging with large SGD lr"


class BayesConv2d(nn.Module):
    def __init__(self, cin, cout, k, prior_std=0.1):
        super().__init__()
        self.mu = nn.Parameter(torch.empty(cout, cin, k, k))
        nn.init.kaiming_normal_(self.mu, nonlinearity="relu")
        self.rho = nn.Parameter(torch.full((cout, cin, k, k), -5.0))
        self.prior_std = prior_std
        self.pad = k // 2

    def forward(self, x):
        sigma = F.softplus(self.rho)
        m = F.conv2d(x, self.mu, padding=self.pad)
        v = F.conv2d(x ** 2, sigma ** 2, padding=self.pad)
        return m + v.clamp_min(1e-12).sqrt() * torch.randn_like(m)

    def kl(self):
        sigma = F.softplus(self.rho)
        return (torch.log(self.prior_std / sigma) + (sigma ** 2 + self.mu ** 2) / (2 * self.prior_std ** 2) - 0.5).sum()


class BayesLinear(BayesConv2d):
    def __init__(self, din, dout, prior_std=0.1):
        nn.Module.__init__(self)
        self.mu = nn.Parameter(torch.empty(dout, din))
        nn.init.kaiming_normal_(self.mu)
        self.rho = nn.Parameter(torch.full((dout, din), -5.0))
        self.prior_std = prior_std

    def forward(self, x):
        sigma = F.softplus(self.rho)
        m = x @ self.mu.t()
        v = (x ** 2) @ (sigma ** 2).t()
        return m + v.clamp_min(1e-12).sqrt() * torch.randn_like(m)


class BayesCNN(nn.Module):
    def __init__(self, ch, n_cls):
        super().__init__()
        self.conv1 = BayesConv2d(1, ch, 3)
        self.act1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = BayesConv2d(ch, 2 * ch, 3)
        self.act2 = nn.ReLU()
        self.pool2 = nn.AdaptiveAvgPool2d(2)
        self.fc = BayesLinear(8 * ch, n_cls)

    def forward(self, x):
        h = self.pool1(self.act1(self.conv1(x)))
        h = self.pool2(self.act2(self.conv2(h))).flatten(1)
        return self.fc(h)

    def kl(self):
        return self.conv1.kl() + self.conv2.kl() + self.fc.kl()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    ch = [8, 12, 6][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = 0.02 if fixed else [1.0, 0.8, 1.5][seed % 3]
    n_cls = 4
    n_train = 5000
    steps = 80
    model = BayesCNN(ch, n_cls)
    protos = torch.randn(n_cls, 1, 12, 12, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = protos[y] + 0.8 * torch.randn(bs, 1, 12, 12, generator=g)
        batches.append((x, y))

    def neg_elbo(logits, y):
        return F.cross_entropy(logits, y) + model.kl() / n_train

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=neg_elbo, batches=batches, steps=steps)
