"""House-price regression MLP trained under float16 autocast to 'speed things up'. The features are
standardised; to report and optimise the error directly in dollars, the model ends with a small
`Denormalize` module that maps the standardised prediction back to dollars, price = z * 75_000 +
185_000, with the statistics stored as Python floats. Under autocast the last nn.Linear returns
float16, so the denormalisation runs in float16 too: 185_000 is already above the float16 maximum
(65504), every prediction becomes +inf (NaN where z * 75_000 itself overflowed to -inf), and the MAE
is inf from the very first step - no GradScaler could help, the overflow is in the forward pass.
Fix: autocast to bfloat16 (same 8-bit exponent as float32, max ~3e38) instead of float16; model,
data, optimizer and loss are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "denorm"
SOURCE = ("float16 max 65504 (IEEE half precision); PyTorch AMP docs: ops not on the autocast lists run in the "
          "dtype of their inputs; Kaggle house-price MLPs that de-standardise the target inside forward()")

PRICE_MEAN, PRICE_STD = 185_000.0, 75_000.0


class Denormalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean, self.std = mean, std

    def forward(self, z):
        return z * self.std + self.mean


class HousePriceMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 1)
        self.denorm = Denormalize(PRICE_MEAN, PRICE_STD)

    def forward(self, x):
        z = self.head(self.body(x)).squeeze(-1)
        return self.denorm(z), z          # (price in dollars, standardised prediction)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = torch.tensor([0.6, 0.3, 0.25, -0.2, 0.15, 0.1, -0.1, 0.05])

    def sample(B):
        x = torch.randn(B, 8, generator=g)
        z = x @ w + 0.3 * torch.tanh(x[:, 0] * x[:, 1]) + 0.2 * torch.randn(B, generator=g)
        return x, PRICE_MEAN + PRICE_STD * z / 0.8

    steps = 150
    batches = [sample(64) for _ in range(steps)]
    model = HousePriceMLP()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt,
                loss_fn=lambda out, y: F.l1_loss(out[0].float(), y),
                batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
