"""Deep Knowledge Tracing (Piech et al. 2015): an LSTM reads a student's sequence of (skill, correct)
interaction ids and, at every step, predicts the probability of answering each of 50 skills
correctly; the BCE is taken on the skill actually attempted next (padding masked out). The
optimiser was switched from the original SGD recipe to Adam but kept its lr=1.0. Adam's per-parameter
steps of ~1.0 overshoot on every update: the LSTM gates and the output layer swing from one
saturated configuration to another, the logits grow to tens, and the masked BCE climbs to about
twice its starting value of ~0.69 and stays there for the whole run. The LSTM keeps everything bounded, so no
value becomes non-finite; the run simply never learns. The fix is Adam's usual lr=3e-3."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Piech et al. 2015 'Deep Knowledge Tracing'; SGD learning rates carried into Adam (common DKT re-implementation issue)"

N_SKILL, T, STEPS, BATCH = 50, 40, 150, 32


class DKT(nn.Module):
    def __init__(self):
        super().__init__()
        self.inter = nn.Embedding(2 * N_SKILL + 1, 32, padding_idx=0)
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.out = nn.Linear(64, N_SKILL)

    def forward(self, inter_ids, next_skill):
        h, _ = self.lstm(self.inter(inter_ids))
        logits = self.out(h)                                   # (B, T, skills)
        return logits.gather(-1, next_skill.unsqueeze(-1)).squeeze(-1)


def _students(g, n):
    ability = torch.randn(n, 1, generator=g)
    diff = torch.randn(N_SKILL, generator=g)
    skills = torch.randint(0, N_SKILL, (n, T + 1), generator=g)
    learn = torch.cumsum(torch.full((n, T + 1), 0.06), 1)
    correct = (torch.rand(n, T + 1, generator=g) < torch.sigmoid(1.5 * (ability - diff[skills]) + learn)).long()
    lens = torch.randint(T // 2, T + 1, (n,), generator=g)
    mask = torch.arange(T).unsqueeze(0) < lens.unsqueeze(1)
    inter = (skills[:, :T] * 2 + correct[:, :T] + 1) * mask
    return (inter, skills[:, 1:]), (correct[:, 1:].float(), mask.float())


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12000 + seed)
    model = DKT()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else 1.0)
    (inter, nxt), (y, m) = _students(g, 30 * BATCH)
    batches = []
    for i in range(STEPS):
        j = i % 30
        sl = slice(j * BATCH, (j + 1) * BATCH)
        batches.append(((inter[sl], nxt[sl]), (y[sl], m[sl])))

    def loss_fn(logits, target):
        y, m = target
        bce = F.binary_cross_entropy_with_logits(logits, y, reduction="none")
        return (bce * m).sum() / m.sum()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
