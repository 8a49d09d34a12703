"""Neural Additive Model (one small net per feature, ExU first layer h = ReLU-1(exp(w)(x - b))
with w ~ N(4, 0.5) as in the NAM paper) on census-block housing data, trained with NAdam. NAM
assumes features min-max scaled to [-1, 1]; here the raw columns go in (income in USD, house
age in years, rooms and population in counts, lat/lon in degrees). With exp(w) ~ 55 every ExU
unit is pushed far past its [0, 1] window for every row, so each shape function is constant,
the ExU gradients are exactly zero and the loss stays at the target variance.
fixed=True: the same features min-max scaled to [-1, 1] with dataset statistics.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("Agarwal et al. 2021 'Neural Additive Models' (ExU units, ReLU-n, inputs scaled to "
          "[-1,1]); California-housing style raw census features; NAdam (Dozat 2016). Reported "
          "pattern: NAM shape functions flat / loss stuck when features are not rescaled.")

N_FEAT, BATCH, STEPS = 6, 128, 200


class ExU(nn.Module):
    def __init__(self, out):
        super().__init__()
        self.w = nn.Parameter(torch.randn(1, out) * 0.5 + 4.0)
        self.b = nn.Parameter(torch.randn(out) * 0.5)

    def forward(self, x):                       # x: (B, 1)
        return torch.clamp((x - self.b) * torch.exp(self.w), 0, 1)   # ReLU-1


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.exu = ExU(64)
        self.mlp = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))
        nn.init.zeros_(self.mlp[2].weight)      # additive model starts at the mean prediction
        nn.init.zeros_(self.mlp[2].bias)

    def forward(self, x):
        return self.mlp(self.exu(x))


class NAM(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.ModuleList([FeatureNet() for _ in range(N_FEAT)])
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        contrib = [f(x[:, i:i + 1]) for i, f in enumerate(self.features)]
        return torch.cat(contrib, 1).sum(1) + self.bias


def _census(g, n):
    u = lambda lo, hi: lo + (hi - lo) * torch.rand(n, generator=g)
    income = torch.exp(torch.randn(n, generator=g) * 0.45 + 1.3).clamp(0.5, 15) * 1e4   # USD
    age = u(1, 52)
    rooms = torch.exp(torch.randn(n, generator=g) * 0.7 + 7.5).clamp(2, 40000)
    pop = rooms * u(0.3, 0.8)
    lat, lon = u(32.5, 42.0), u(-124.3, -114.3)
    coast = torch.exp(-((lon + 122.0) ** 2) / 4.0)
    value = (0.45e-4 * income + 0.004 * age - 0.00002 * pop + 0.00001 * rooms
             + 1.2 * coast - 0.08 * (lat - 36) ** 2 / 4 + 0.1 * torch.randn(n, generator=g))
    x = torch.stack([income, age, rooms, pop, lat, lon], 1)
    y = (value - value.mean()) / value.std()
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    x, y = _census(g, BATCH * STEPS)
    if fixed:   # NAM preprocessing: min-max to [-1, 1]
        lo, hi = x.min(0).values, x.max(0).values
        x = 2 * (x - lo) / (hi - lo) - 1
    batches = [(x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]) for i in range(STEPS)]
    model = NAM()
    exu = [p for n, p in model.named_parameters() if ".exu." in n]
    rest = [p for n, p in model.named_parameters() if ".exu." not in n]
    optimizer = torch.optim.NAdam([{"params": exu, "weight_decay": 0.0},
                                   {"params": rest, "weight_decay": 1e-5}],
                                  lr=5e-3, momentum_decay=4e-3)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches,
                steps=STEPS, amp_dtype=None, scaler=None)
