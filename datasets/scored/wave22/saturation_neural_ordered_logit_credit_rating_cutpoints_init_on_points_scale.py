"""Neural ordered-logit (proportional-odds / cumulative-link) model for credit ratings: an MLP maps
standardised borrower / issuer features to a latent creditworthiness f(x), and learnable
cutpoints theta_1 < ... < theta_{K-1} give P(rating <= k | x) = sigmoid(theta_k - f(x)); the
loss is the ordinal negative log-likelihood -log(P(y <= k) - P(y <= k-1)).

Mechanism: the cutpoints were initialised "to the rating bands" -- the bureau score band edges
in points (580, 620, 660, ...), because the latent was thought of as a score. The latent starts
near 0, so every theta_k - f(x) is +500..+800 and every cumulative sigmoid is exactly 1.0 in
float32. All interior class probabilities are 0 (floored by the 1e-9 in the log), and the
sigmoid derivative is exactly 0, so neither the cutpoints nor the network receive any gradient:
the loss is stuck at its step-0 value.

ORIGIN: "ordinal_head" -- the cumulative-logit module holding the cutpoints and the saturated
sigmoids.

Fix (fixed=True): cutpoints initialised on the logit scale (logits of the empirical cumulative
class frequencies, i.e. of the same order as f(x)). Same network, optimiser, lr and data.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "ordinal_head"
SOURCE = ("ordered-logit / cumulative link neural credit-rating models (e.g. ordinal NN rating "
          "migration papers); cutpoints initialised on the score-point scale instead of logits")


class OrdinalHead(nn.Module):
    def __init__(self, init_cutpoints):
        super().__init__()
        self.cutpoints = nn.Parameter(torch.tensor(init_cutpoints, dtype=torch.float32))

    def forward(self, f):
        cdf = torch.sigmoid(self.cutpoints[None, :] - f[:, None])
        ones = torch.ones_like(cdf[:, :1])
        zeros = torch.zeros_like(cdf[:, :1])
        return torch.cat([cdf, ones], 1) - torch.cat([zeros, cdf], 1)   # class probabilities


class NeuralOrderedLogit(nn.Module):
    def __init__(self, n_feat, hidden, init_cutpoints):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.ordinal_head = OrdinalHead(init_cutpoints)

    def forward(self, x):
        return self.ordinal_head(self.body(x).squeeze(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n_feat = [10, 14, 12][seed % 3]
    hidden = [32, 48, 40][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = [5e-3, 4e-3, 6e-3][seed % 3]
    n_cls = [7, 6, 8][seed % 3]
    steps = 250
    w = rng.normal(size=n_feat) / np.sqrt(n_feat)
    true_cuts = np.linspace(-1.8, 1.8, n_cls - 1)

    def sample(b):
        x = rng.normal(size=(b, n_feat))
        latent = 2.0 * (x @ w) + 0.5 * np.sin(x[:, 0] * 2) + rng.logistic(size=b) * 0.5
        y = np.searchsorted(true_cuts, latent)
        return torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.long)

    batches = [sample(batch) for _ in range(steps)]
    if fixed:
        ys = torch.cat([b[1] for b in batches[:5]]).numpy()
        cum = np.cumsum(np.bincount(ys, minlength=n_cls))[:-1] / len(ys)
        cum = np.clip(cum, 0.02, 0.98)
        init = np.sort(np.log(cum / (1 - cum)))
    else:
        init = 580.0 + 40.0 * np.arange(n_cls - 1)          # score band edges, in points
    model = NeuralOrderedLogit(n_feat, hidden, init)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(probs, y):
        return -torch.log(probs.gather(1, y[:, None]).squeeze(1) + 1e-9).mean()

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn,
            "batches": batches, "steps": steps}
