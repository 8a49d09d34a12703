"""Gradient-trained Gaussian mixture model (learnable logits, means and per-component diagonal
log-scales) fitted by maximum likelihood to tight clusters of 3-D sensor-drift residuals whose
per-coordinate spread is ~0.05. The loss is the average negative log-likelihood computed with
logsumexp. Because the data are tightly concentrated, the fitted density exceeds 1 and the NLL
goes negative within a few dozen steps and keeps decreasing (to about -1 ... -3.5 depending on the seed); the
log-scales shrink steadily and the gradients on the means are large while the components are
still wide. Nothing is wrong: a negative NLL is normal for a continuous density, the
mixture weights stay spread over the components and nothing diverges (the data have finite
spread, so the scales settle)."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Differentiable GMM / mixture density fitting by SGD (Bishop PRML ch. 9; e.g. "
          "'Deep Gaussian Mixture' tutorials); recurring 'why is my NLL loss negative' Q&A for "
          "continuous densities")


class DiagGMM(nn.Module):
    def __init__(self, K, d, init_means):
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(K))
        self.means = nn.Parameter(init_means.clone())
        self.log_scales = nn.Parameter(torch.zeros(K, d))

    def forward(self, x):
        diff = (x.unsqueeze(1) - self.means) / self.log_scales.exp()      # B, K, d
        comp = (-0.5 * diff.pow(2) - self.log_scales - 0.5 * math.log(2 * math.pi)).sum(-1)
        return torch.logsumexp(torch.log_softmax(self.logits, 0) + comp, dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5150 + seed)
    d = 3
    K = [3, 4, 5][seed % 3]
    batch = [128, 256, 192][seed % 3]
    steps = [200, 160, 240][seed % 3]
    lr = [0.05, 0.04, 0.03][seed % 3]

    centers = torch.randn(K, d, generator=g) * 0.6
    spread = 0.03 + 0.04 * torch.rand(K, d, generator=g)
    batches = []
    for _ in range(steps):
        c = torch.randint(0, K, (batch,), generator=g)
        x = centers[c] + spread[c] * torch.randn(batch, d, generator=g)
        batches.append((x, torch.zeros(batch)))

    init_means = batches[0][0][:K].clone()        # means initialised on K data points
    model = DiagGMM(K, d, init_means)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(loglik, y):
        return -loglik.mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
