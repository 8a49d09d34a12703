"""Healthy: a diagonal-covariance GMM-UBM over MFCC frames, trained by gradient descent on its NLL.

What looks wrong but is not: the model is a mixture model (K diagonal Gaussians, learned
means, log-variances and mixture logits; frame log-likelihood via ``torch.logsumexp``) fitted
with Adam on the mean negative log-likelihood of the frames.  The data are compact clusters
(per-component standard deviations ~0.05-0.15 in 13-20 dims), so once the variances shrink
towards the truth the density exceeds 1 and the NLL crosses zero and keeps falling to a clearly
*negative* value (about -5 to -17 nats per frame).  The loss is a density, not an error, so negative
values are expected; early steps also show a large drop as the components move onto the
clusters, and several components stay idle (their gradients are ~0) because the UBM has more
components than clusters.  The log-variances are parameterised freely but the loss only sees
exp(-logvar) through finite arithmetic; no clamping is needed for this data.

ORIGIN: None (healthy).

Fix: none needed.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Reynolds et al. 2000, 'Speaker verification using adapted Gaussian mixture models' "
          "(GMM-UBM on MFCCs); gradient-trained GMMs with logsumexp likelihoods (e.g. "
          "torch.distributions.MixtureSameFamily); negative NLL of continuous densities")


class DiagGMM(nn.Module):
    def __init__(self, k, d, init_means):
        super().__init__()
        self.means = nn.Parameter(init_means.clone())
        self.logvar = nn.Parameter(torch.zeros(k, d))
        self.logits = nn.Parameter(torch.zeros(k))

    def forward(self, x):                                  # (B, D) -> (B,) log-likelihood
        diff = x.unsqueeze(1) - self.means                 # (B, K, D)
        ll = -0.5 * (diff ** 2 * torch.exp(-self.logvar) + self.logvar + math.log(2 * math.pi))
        comp = ll.sum(-1) + torch.log_softmax(self.logits, -1)
        return torch.logsumexp(comp, dim=-1)


def neg_log_likelihood(loglik, _unused):
    return -loglik.mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(16000 + seed)
    k = [16, 24, 32][seed % 3]
    d = [13, 20, 16][seed % 3]
    bs = [256, 192, 128][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    n_true, steps = 8, 200

    true_means = 2.0 * torch.randn(n_true, d, generator=g)
    true_std = 0.05 + 0.1 * torch.rand(n_true, d, generator=g)
    weights = torch.softmax(torch.randn(n_true, generator=g), -1)
    batches = []
    for _ in range(steps):
        c = torch.multinomial(weights, bs, replacement=True, generator=g)
        x = true_means[c] + true_std[c] * torch.randn(bs, d, generator=g)
        batches.append((x, torch.zeros(bs)))

    torch.manual_seed(seed)
    init = batches[0][0][torch.randperm(bs)[:k]] + 0.1 * torch.randn(k, d)   # k-means++-free init
    model = DiagGMM(k, d, init)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=neg_log_likelihood, batches=batches,
                steps=steps)
