"""Blind SNR estimator (utterance-level MLP) hit early by one shard of non-log mel features.

Mechanism: an MLP regresses the standardised SNR of a noisy utterance from pooled log-mel
statistics (80 dims, globally mean/variance normalised), trained with MSE and AdamW
(beta2 = 0.999).  One feature shard was re-extracted by a job that skipped the ``log`` (and thus
the normalisation statistics no longer apply): its pooled mel values are linear power, up to
~1e5.  That batch arrives in the first few steps.  Its gradient norm is ~1e5-1e7 times the normal
one; Adam's bias-corrected step is bounded, so the weights are not wrecked, but the second-
moment estimate v is inflated by the same factor squared and decays only as 0.999^t.  For the
rest of the run every update is m/sqrt(v), a tiny fraction of its normal size: the loss freezes
near its initial value -- a stall without any non-finite value.  The failing step depends on
the seed.

ORIGIN: None -- the model and optimiser are sound; the failure starts in one corrupt batch of
data, not in a module.

Fix: validate shards before batching and drop utterances whose features fall outside the
log-mel range (|z| > 50 after normalisation); the rest of the run is unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("mixed feature-extraction versions in a sharded dataset (one shard without the log "
          "compression); Adam second-moment inflation freezing training after a single huge-"
          "gradient batch (Molybog et al. 2023, 'A Theory on Adam Instability'); non-intrusive "
          "SNR estimators trained with MSE")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(4000 + seed)
    depth = [2, 3, 2][seed % 3]
    width = [128, 96, 160][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [2e-3, 1.5e-3, 2.5e-3][seed % 3]
    bad_step = [3, 5, 4][seed % 3]
    steps, n_feat = 160, 80

    # ground-truth SNR as a smooth nonlinear function of the pooled features
    P = torch.randn(n_feat, 8, generator=g) / n_feat ** 0.5
    v = torch.randn(8, generator=g)
    mu_db, sd_db = 12.5, 10.0

    def snr_db(x):
        z = torch.tanh(x @ P * 1.5) @ v
        return (mu_db + sd_db * z / (v.norm() * 0.6)).clamp(-5, 30)

    batches = []
    for step in range(steps):
        x = torch.randn(bs, n_feat, generator=g)
        y = ((snr_db(x) - mu_db) / sd_db).unsqueeze(1)
        if step == bad_step:
            k = bs // 2                     # half the batch comes from the bad shard
            x[:k] = torch.exp(2.3 * x[:k] + 4.0)   # linear power instead of normalised log
        if fixed:
            keep = x.abs().amax(1) <= 50.0
            x, y = x[keep], y[keep]
        batches.append((x, y))

    torch.manual_seed(seed)
    layers, d = [], n_feat
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers += [nn.Linear(d, 1)]
    model = nn.Sequential(*layers)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
