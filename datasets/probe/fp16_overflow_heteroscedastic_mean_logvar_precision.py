"""Rainfall heteroscedastic regression, model(x) -> (mean, log_var) from two heads, trained with the
hand-written Gaussian NLL of Kendall & Gal (2017): 0.5*(exp(-log_var)*(y-mean)^2 + log_var).  On dry
hours (identifiable from the features) the target is only gauge noise (~1e-3 mm), so the NLL optimum
there is log_var ~ -13.5, harmless in float32.  Under float16 autocast log_var leaves the Linear head
in half precision and exp(-log_var) runs in fp16: once log_var falls below -11.1 the precision
exceeds 65504, becomes inf, and the loss turns non-finite mid-run (~step 50).
fixed=True: loss_fn casts mean/log_var to float32 before the exp (fp32 for the op).
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ("Kendall & Gal 2017 'What Uncertainties Do We Need...' aleatoric loss exp(-s)*||y-f||^2 + s; "
          "Seitzer et al. 2022 on collapsing variances in beta-NLL; AMP reports of inf/NaN Gaussian NLL "
          "because exp(-log_var) overflows float16")

IN_DIM, BATCH = 12, 128


class RainfallMeanVarianceNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(IN_DIM, 128), nn.SiLU(), nn.Linear(128, 128), nn.SiLU())
        self.mean_head = nn.Linear(128, 1)
        self.logvar_head = nn.Linear(128, 1)

    def forward(self, x):
        h = self.trunk(x)
        mean = torch.relu(self.mean_head(h)).squeeze(-1)  # rainfall is non-negative
        return mean, self.logvar_head(h).squeeze(-1)


def _make_batches(g, steps):
    w = torch.randn(IN_DIM, generator=g) / IN_DIM ** 0.5
    thr = 0.2 + 0.3 * torch.rand(1, generator=g).item()
    batches = []
    for _ in range(steps):
        x = torch.randn(BATCH, IN_DIM, generator=g)        # standardised weather features
        wet = x[:, 0] + 0.3 * x[:, 1] > thr                 # humidity / pressure decide rain
        amount = torch.log1p(torch.exp(x @ w)) * (1.0 + 0.3 * torch.randn(BATCH, generator=g))
        floor = 2e-3 * torch.randn(BATCH, generator=g).abs()   # dry hours: gauge noise floor only
        y = torch.where(wet, amount.clamp_min(0.0), floor)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    steps = 300
    batches = _make_batches(g, steps)
    torch.manual_seed(seed)
    model = RainfallMeanVarianceNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss_fn(out, y):
        mean, log_var = out
        if fixed:
            mean, log_var = mean.float(), log_var.float()
        precision = torch.exp(-log_var)
        return 0.5 * (precision * (y - mean) ** 2 + log_var).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
