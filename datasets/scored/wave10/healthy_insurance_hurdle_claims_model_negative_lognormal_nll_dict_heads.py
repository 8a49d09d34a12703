"""Hurdle model for motor-insurance claims fed from a policy feature store: a shared tower over
standardised policy features plus a hashed vehicle-model embedding outputs a dict
{"claim_logit", "sev_mu", "sev_log_sigma"}. The loss is BCE for "any claim" plus, for policies
with a claim only, the Gaussian negative log-likelihood of the log claim amount (standardised),
normalised by the number of claims in the batch. Things that look alarming but are normal: the
loss heads towards and below zero (negative in most seeds) once the learned severity sigma gets
small (a log-density, not a probability), the
number of rows feeding the severity heads varies a lot from batch to batch (claims are ~15%, so
most rows give exactly zero gradient to those heads), and the loss is visibly noisy. RMSprop
trains it steadily; nothing fails.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Frequency-severity / hurdle (two-part) models in actuarial pricing; "
          "Gaussian NLL heads with a learned log-sigma (Nix & Weigend 1994) giving negative losses")

N_FEAT, N_BUCKETS, EMB = 14, 256, 6


class HurdleModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.vehicle = nn.Embedding(N_BUCKETS, EMB)
        self.tower = nn.Sequential(nn.Linear(N_FEAT + EMB, 64), nn.SiLU(), nn.Linear(64, 32), nn.SiLU())
        self.claim = nn.Linear(32, 1)
        self.sev = nn.Linear(32, 2)

    def forward(self, feats, vehicle_hash):
        h = self.tower(torch.cat([feats, self.vehicle(vehicle_hash % N_BUCKETS)], -1))
        mu, log_sigma = self.sev(h).unbind(-1)
        return {"claim_logit": self.claim(h).squeeze(-1), "sev_mu": mu, "sev_log_sigma": log_sigma}


def loss_fn(out, y):
    has_claim, log_amount = y["has_claim"], y["log_amount"]
    freq = F.binary_cross_entropy_with_logits(out["claim_logit"], has_claim)
    z = (log_amount - out["sev_mu"]) * torch.exp(-out["sev_log_sigma"])
    nll = out["sev_log_sigma"] + 0.5 * z ** 2 + 0.5 * math.log(2 * math.pi)
    sev = (nll * has_claim).sum() / has_claim.sum().clamp_min(1.0)
    return freq + sev


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = HurdleModel()
    w_f = torch.randn(N_FEAT, generator=g) * 0.5
    w_s = torch.randn(N_FEAT, generator=g) * 0.4
    veh_risk = torch.randn(N_BUCKETS, generator=g) * 0.5
    steps, bs = 250, 96
    batches = []
    for _ in range(steps):
        feats = torch.randn(bs, N_FEAT, generator=g)
        veh = torch.randint(0, 10 ** 6, (bs,), generator=g)
        logit = feats @ w_f + veh_risk[veh % N_BUCKETS] - 2.0
        has_claim = (torch.rand(bs, generator=g) < torch.sigmoid(logit)).float()
        log_amount = (feats @ w_s + 0.08 * torch.randn(bs, generator=g)) * has_claim
        batches.append(((feats, veh), {"has_claim": has_claim, "log_amount": log_amount}))
    opt = torch.optim.RMSprop(model.parameters(), lr=2e-3, alpha=0.99)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
