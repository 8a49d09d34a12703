"""Semi-supervised one-class anomaly scorer for machine-sensor windows (Deep SVDD / Deep SAD style):
an encoder maps each 40-feature window to a layer-normalised 128-d latent code, the normality score is
sigmoid(b - ||z - c||^2) with a learnable centre c and offset b, and the few labelled windows
(normal = 1, anomaly = 0) are fitted with a Brier (MSE) loss so the score stays a calibrated
probability. The squared distance is SUMMED over the 128 latent dimensions, so for O(1) latent
codes it is ~200 for every window: the sigmoid's pre-activation sits around -200, the score is ~0
for normal and anomalous windows alike, and the sigmoid derivative (~e^-200) cuts the gradient to the
encoder, centre and offset. The Brier loss stays at the fraction of normal windows and never goes
non-finite. The fix averages the squared distance over the latent dimensions (mean instead of sum),
which keeps the pre-activation O(1); everything else is unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "score_act"
SOURCE = "Ruff et al. 2018/2020 Deep SVDD / Deep SAD; sigmoid-of-distance scoring heads with summed squared distance (saturation at score 0)"

N_FEAT, LATENT, STEPS, BATCH = 40, 128, 150, 128


class OneClassScorer(nn.Module):
    def __init__(self, mean_distance):
        super().__init__()
        self.mean_distance = mean_distance
        self.encoder = nn.Sequential(nn.Linear(N_FEAT, 128), nn.GELU(), nn.Linear(128, LATENT),
                                     nn.LayerNorm(LATENT))
        self.center = nn.Parameter(torch.zeros(LATENT))
        self.offset = nn.Parameter(torch.zeros(1))
        self.score_act = nn.Sigmoid()

    def forward(self, x):
        z = self.encoder(x)
        d2 = (z - self.center).pow(2)
        d2 = d2.mean(-1) if self.mean_distance else d2.sum(-1)
        return self.score_act(self.offset - d2)


def _windows(g, n):
    base = torch.randn(n, N_FEAT, generator=g)
    anomaly = torch.rand(n, generator=g) < 0.4
    shift = torch.zeros(N_FEAT)
    shift[:8] = 2.5
    x = torch.where(anomaly.unsqueeze(1), base * 1.8 + shift, base)
    return x, (~anomaly).float()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(10000 + seed)
    model = OneClassScorer(mean_distance=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = _windows(g, 40 * BATCH)
    batches = [(x[(i % 40) * BATCH:(i % 40 + 1) * BATCH], y[(i % 40) * BATCH:(i % 40 + 1) * BATCH]) for i in range(STEPS)]

    def loss_fn(score, target):
        return F.mse_loss(score, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
