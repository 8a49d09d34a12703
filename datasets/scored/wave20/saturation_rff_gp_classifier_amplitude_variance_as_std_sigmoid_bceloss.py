"""Deep random-feature GP classifier (SNGP-style head, Liu et al. 2020): an MLP feature extractor
with LayerNorm, a random-Fourier-feature layer phi(h) = amp * sqrt(2/M) * cos(W h + b) with fixed
W ~ N(0, 1/l^2), a linear GP output layer, and the Bernoulli likelihood written as `nn.Sigmoid()` +
`nn.BCELoss` (binary anomaly vs normal).

Mechanism: the kernel amplitude was configured as a *variance* of 4e4 (200^2) and used directly as the
multiplier of the features (amp = 4e4 instead of sqrt(amp_var) ~ 1).  The GP logits therefore
have magnitude of order 100 or more from step 0, the sigmoid unit returns exactly 0.0 or 1.0 in float32,
BCELoss clamps the log at -100 for the misclassified half and the gradient through the saturated
sigmoid is exactly zero.  Loss is stuck at ~50 (half the samples x 100) for the whole run.
ORIGIN: likelihood - the saturated Sigmoid.
Fix: amplitude as a standard deviation (sqrt of the configured variance scaled to 1), i.e. logits
of order 1; nothing else changes."""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "likelihood"
SOURCE = "Liu et al. 2020 SNGP random-feature GP head; kernel amplitude variance-vs-std confusion saturating sigmoid+BCELoss"


class RFFGPClassifier(nn.Module):
    def __init__(self, d_in, width, n_rff, amp, gen):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, width), nn.LayerNorm(width), nn.ReLU(),
                                      nn.Linear(width, width), nn.LayerNorm(width))
        self.register_buffer("W", torch.randn(width, n_rff, generator=gen) / math.sqrt(width))  # lengthscale sqrt(width)
        self.register_buffer("b", 2 * math.pi * torch.rand(n_rff, generator=gen))
        self.amp = amp
        self.n_rff = n_rff
        self.gp_out = nn.Linear(n_rff, 1)
        self.likelihood = nn.Sigmoid()

    def forward(self, x):
        h = self.features(x)
        phi = self.amp * math.sqrt(2.0 / self.n_rff) * torch.cos(h @ self.W + self.b)
        return self.likelihood(self.gp_out(phi).squeeze(1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = 12
    width = [64, 32, 48][seed % 3]
    n_rff = [512, 384, 1024][seed % 3]
    bs = [64, 128, 96][seed % 3]
    lr = [1e-2, 5e-3, 8e-3][seed % 3]
    steps = 80
    amp_var = 4e4
    amp = 1.0 if fixed else amp_var  # bug: variance used where a std-like multiplier is needed
    model = RFFGPClassifier(d_in, width, n_rff, amp, g)
    w = torch.randn(d_in, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d_in, generator=g)
        y = ((x @ w) + 0.5 * (x[:, 0] * x[:, 1]) > 0).float()
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(), batches=batches, steps=steps)
