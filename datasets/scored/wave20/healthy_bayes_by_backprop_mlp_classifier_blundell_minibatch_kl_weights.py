"""Bayes-by-backprop MLP classifier (Blundell et al. 2015): mean-field Gaussian posteriors over all
weights (mu, rho with sigma = softplus(rho)), one reparameterised weight sample per step, and the
minibatch KL weighting of section 3.4 of the paper: within each epoch of M minibatches the i-th
minibatch gets KL weight pi_i = 2^(M-i) / (2^M - 1).  Loss = cross-entropy + pi_i * KL(q||p) / B.

Why it looks alarming but is fine: the first minibatch of every epoch carries half of the whole
KL, so the loss jumps by an order of magnitude at every epoch boundary and then decays
geometrically over the epoch - a saw-tooth of large periodic spikes.  The weight noise also makes
the cross-entropy noisy.  The spikes are the intended schedule; the data term improves steadily
and the run converges.
ORIGIN: None (healthy run).  `fixed` builds the identical run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Blundell et al. 2015 'Weight Uncertainty in Neural Networks', minibatch KL re-weighting pi_i = 2^(M-i)/(2^M-1)"


class BayesLinear(nn.Module):
    def __init__(self, din, dout, prior_std=1.0):
        super().__init__()
        self.w_mu = nn.Parameter(torch.empty(dout, din).uniform_(-din ** -0.5, din ** -0.5))
        self.w_rho = nn.Parameter(torch.full((dout, din), -5.0))
        self.b_mu = nn.Parameter(torch.zeros(dout))
        self.b_rho = nn.Parameter(torch.full((dout,), -5.0))
        self.prior_std = prior_std

    def forward(self, x):
        w = self.w_mu + F.softplus(self.w_rho) * torch.randn_like(self.w_mu)
        b = self.b_mu + F.softplus(self.b_rho) * torch.randn_like(self.b_mu)
        return F.linear(x, w, b)

    def kl(self):
        total = 0.0
        for mu, rho in ((self.w_mu, self.w_rho), (self.b_mu, self.b_rho)):
            s = F.softplus(rho)
            total = total + (torch.log(self.prior_std / s) + (s ** 2 + mu ** 2) / (2 * self.prior_std ** 2) - 0.5).sum()
        return total


class BBBClassifier(nn.Module):
    def __init__(self, d_in, width, n_cls):
        super().__init__()
        self.fc1 = BayesLinear(d_in, width)
        self.act1 = nn.ReLU()
        self.fc2 = BayesLinear(width, width)
        self.act2 = nn.ReLU()
        self.out = BayesLinear(width, n_cls)

    def forward(self, x):
        return self.out(self.act2(self.fc2(self.act1(self.fc1(x)))))

    def kl(self):
        return self.fc1.kl() + self.fc2.kl() + self.out.kl()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = 10
    width = [32, 64, 48][seed % 3]
    n_cls = [3, 4, 5][seed % 3]
    bs = [50, 64, 40][seed % 3]
    m_batches = [20, 25, 16][seed % 3]
    lr = [3e-3, 2e-3, 3e-3][seed % 3]
    epochs = 5
    steps = m_batches * epochs
    model = BBBClassifier(d_in, width, n_cls)
    centers = torch.randn(n_cls, d_in, generator=g)
    X = []
    Y = []
    for _ in range(m_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        X.append(centers[y] + 0.8 * torch.randn(bs, d_in, generator=g))
        Y.append(y)
    batches = [(X[t % m_batches], Y[t % m_batches]) for t in range(steps)]
    state = {"t": 0}

    def loss_fn(logits, y):
        i = state["t"] % m_batches + 1
        state["t"] += 1
        pi = 2.0 ** (m_batches - i) / (2.0 ** m_batches - 1)
        return F.cross_entropy(logits, y) + pi * model.kl() / y.shape[0]

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
