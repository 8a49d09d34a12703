"""ICU early-warning model over the first hours of a stay: model(values, obs_mask) takes padded
hourly vitals/labs (T x 10) plus the padding mask, encodes each hour with an MLP, pools the valid
hours (masked mean and max) and returns (mortality_logit, length_of_stay) for a BCE + 0.5*MSE
multi-task loss.  The features are fed in raw clinical units (platelets ~2.5e5 /uL, WBC ~9e3 /uL,
glucose ~130 mg/dL, ...) and length of stay in raw hours (~100), so activations and the MSE term
are enormous from step 0 and the first SGD updates blow the weights up to inf/NaN.
fixed=True: features z-scored per channel with statistics of the observed entries (padding stays 0)
and the LOS target standardised; data, model and optimizer unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("MIMIC-III / eICU benchmark style multitask models (Harutyunyan et al. 2019) where raw lab "
          "units are fed without the benchmark's normaliser; common forum reports of NaN loss from "
          "unnormalised clinical features and LOS targets in hours")

T, BATCH = 24, 32
# name: (mean, sd) in raw units
CHANNELS = [("heart_rate", 85, 15), ("sbp", 120, 20), ("temp_c", 37.0, 0.7), ("resp_rate", 18, 4),
            ("spo2", 96, 3), ("glucose", 130, 40), ("creatinine", 1.1, 0.5), ("wbc", 9000, 3000),
            ("platelets", 250000, 60000), ("lactate", 1.8, 0.9)]
F_IN = len(CHANNELS)


class HourEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(F_IN + 1, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())

    def forward(self, values, obs_mask):
        return self.net(torch.cat([values, obs_mask.unsqueeze(-1).float()], dim=-1))


class ICUMultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = HourEncoder()
        self.trunk = nn.Sequential(nn.Linear(128, 64), nn.ReLU())
        self.mortality_head = nn.Linear(64, 1)
        self.los_head = nn.Linear(64, 1)

    def forward(self, values, obs_mask):
        h = self.encoder(values, obs_mask)
        m = obs_mask.unsqueeze(-1).float()
        mean = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        mx = h.masked_fill(m == 0, float("-inf")).amax(1)
        z = self.trunk(torch.cat([mean, mx], dim=-1))
        return self.mortality_head(z).squeeze(-1), self.los_head(z).squeeze(-1)


def _make_batches(g, steps, fixed):
    mu = torch.tensor([c[1] for c in CHANNELS], dtype=torch.float32)
    sd = torch.tensor([c[2] for c in CHANNELS], dtype=torch.float32)
    risk_w = torch.tensor([0.6, -0.5, 0.3, 0.5, -0.6, 0.3, 0.5, 0.4, -0.4, 0.8])
    raw = []
    for _ in range(steps):
        severity = torch.randn(BATCH, generator=g)
        z = 0.5 * severity[:, None, None] * risk_w + torch.randn(BATCH, T, F_IN, generator=g)
        z = z + 0.3 * torch.randn(BATCH, 1, F_IN, generator=g)          # patient baseline
        values = mu + sd * z
        lengths = torch.randint(6, T + 1, (BATCH,), generator=g)
        obs_mask = torch.arange(T)[None, :] < lengths[:, None]
        values = values * obs_mask.unsqueeze(-1)
        score = (z.mean(1) * risk_w).sum(-1)
        died = (torch.rand(BATCH, generator=g) < torch.sigmoid(1.5 * score - 1.5)).float()
        los_h = (48 * torch.exp(0.35 * score + 0.3 * torch.randn(BATCH, generator=g))).clamp(4, 700)
        raw.append((values, obs_mask, died, los_h))
    batches = []
    if fixed:
        obs = torch.cat([v[m] for v, m, _, _ in raw])                   # observed entries only
        f_mu, f_sd = obs.mean(0), obs.std(0)
        los_all = torch.cat([l for _, _, _, l in raw])
        l_mu, l_sd = los_all.mean(), los_all.std()
    for values, obs_mask, died, los_h in raw:
        if fixed:
            values = ((values - f_mu) / f_sd) * obs_mask.unsqueeze(-1)
            los_h = (los_h - l_mu) / l_sd
        batches.append(((values, obs_mask), (died, los_h)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    steps = 200
    batches = _make_batches(g, steps, fixed)
    torch.manual_seed(seed)
    model = ICUMultiTask()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def loss_fn(out, y):
        mort_logit, los_pred = out
        died, los = y
        return F.binary_cross_entropy_with_logits(mort_logit, died) + 0.5 * F.mse_loss(los_pred, los)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
