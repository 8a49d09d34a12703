"""Knowledge-tracing model with response-time input in the SAINT+ style (Shin et al. 2021): per
interaction, the embedding of (question skill, correctness) is summed with a linear 'continuous
embedding' of the (300 s-capped) elapsed time, a causal convolution and a ReLU read-out summarise
the history, and a dot product with the next skill's embedding predicts whether the next answer is
correct (BCE). The log is exported shard by shard from a pandas frame; in one shard, questions the
student skipped were kept with answered_correctly = NaN (the float column's missing value) instead
of being dropped. When that batch arrives mid-run, the BCE of the NaN targets is NaN, the gradient
is NaN everywhere, the Adam step writes NaN into every weight and the loss stays NaN for the rest of
the run. The fix filters the skipped (NaN-label) rows out of that batch by masking them from the
loss; model, optimiser and all other data are unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Shin et al. 2021 SAINT+; Riiid/EdNet-style logs where skipped questions carry a missing (NaN) answered_correctly value"

N_SKILL, T, STEPS, BATCH, BAD_STEP = 60, 30, 150, 32, 70
CAP_S = 300.0


class TimeAwareKT(nn.Module):
    """SAINT+-style inputs (interaction embedding + linear 'continuous embedding' of elapsed time),
    a causal convolution over the history and a ReLU read-out against the next skill."""

    def __init__(self):
        super().__init__()
        self.inter = nn.Embedding(2 * N_SKILL, 32)
        self.time_proj = nn.Linear(1, 32)
        self.history = nn.Conv1d(32, 64, kernel_size=5)
        self.readout = nn.Sequential(nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.skill = nn.Embedding(N_SKILL, 64)
        self.skill_bias = nn.Embedding(N_SKILL, 1)

    def forward(self, inter_ids, elapsed, next_skill):
        x = self.inter(inter_ids) + self.time_proj(elapsed.unsqueeze(-1))      # (B, T, 32)
        h = self.history(F.pad(x.transpose(1, 2), (4, 0))).transpose(1, 2)    # causal conv
        h = self.readout(h)
        return (h * self.skill(next_skill)).sum(-1) / 8.0 + self.skill_bias(next_skill).squeeze(-1)


def _log(g, n):
    ability = torch.randn(n, 1, generator=g)
    diff = torch.randn(N_SKILL, generator=g)
    skills = torch.randint(0, N_SKILL, (n, T + 1), generator=g)
    p = torch.sigmoid(2.5 * ability - 1.5 * diff[skills])
    correct = (torch.rand(n, T + 1, generator=g) < p).long()
    secs = torch.exp(torch.randn(n, T, generator=g) * 0.6 + 3.3)   # ~27 s median response time
    return skills, correct, secs


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(14000 + seed)
    model = TimeAwareKT()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    skills, correct, secs = _log(g, STEPS * BATCH)
    batches = []
    for i in range(STEPS):
        sl = slice(i * BATCH, (i + 1) * BATCH)
        s, c, e = skills[sl], correct[sl], secs[sl].clone()
        e = e.clamp(max=CAP_S)
        y = c[:, 1:].float()
        keep = torch.ones_like(y)
        if i == BAD_STEP:                       # shard where skipped questions kept a NaN label
            skipped = torch.rand(BATCH, T, generator=g) < 0.05
            y = torch.where(skipped, torch.full_like(y, float("nan")), y)
            if fixed:
                keep = (~skipped).float()
                y = torch.nan_to_num(y, nan=0.0)
        batches.append(((s[:, :T] * 2 + c[:, :T], e / CAP_S, s[:, 1:]), (y, keep)))

    def loss_fn(logit, target):
        y, keep = target
        bce = F.binary_cross_entropy_with_logits(logit, y, reduction="none")
        return (bce * keep).sum() / keep.sum()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
