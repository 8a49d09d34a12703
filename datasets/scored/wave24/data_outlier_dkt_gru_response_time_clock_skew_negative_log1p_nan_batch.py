"""Deep Knowledge Tracing (DKT) with a GRU over a student's interaction log. Each step's
input is the embedding of (skill, correct) plus a small projection of log1p(response time in
seconds); the head predicts, for every skill, the probability that the NEXT answer is correct,
and the loss is BCE-with-logits on the skill actually attempted next (padding masked).

Mechanism: response time is computed upstream as `submit_ts - start_ts`. One batch (which
one varies with the seed) comes from a tablet cohort whose device clocks were skewed /
reset during a timezone change, so several of its rows have elapsed times of about -3600 s.
`torch.log1p` of a value below -1 is NaN, the NaN feature goes through `time_proj` into the
GRU and the whole batch's logits and loss are NaN at that step; every earlier step is
perfectly healthy.

ORIGIN: "time_proj", the Linear that receives the corrupt log-time feature: it is the first
module the NaN passes through (the GRU and head only inherit it).

Fix: drop impossible response times in the loader -- clamp elapsed seconds to >= 0 before the
log1p (treating a negative duration as missing/zero); everything else identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "time_proj"
SOURCE = ("ASSISTments / EdNet response-time features (`ms_first_response`, elapsed_time) "
          "containing negative durations from clock skew; DKT (Piech et al. 2015) with "
          "log response-time inputs as in DKT+ / LPKT variants")


class DKT(nn.Module):
    def __init__(self, n_skill, emb, hid):
        super().__init__()
        self.n_skill = n_skill
        self.inter = nn.Embedding(2 * n_skill + 1, emb, padding_idx=0)
        self.time_proj = nn.Linear(1, 16)
        self.gru = nn.GRU(emb + 16, hid, batch_first=True)
        self.head = nn.Linear(hid, n_skill)

    def forward(self, inter, elapsed_s):
        t = torch.log1p(elapsed_s).unsqueeze(-1) / 5.0
        h, _ = self.gru(torch.cat([self.inter(inter), torch.relu(self.time_proj(t))], -1))
        return self.head(h)


def dkt_loss(logits, tgt):
    nxt, cor, mask = tgt[..., 0].long(), tgt[..., 1], tgt[..., 2]
    z = logits.gather(-1, nxt.unsqueeze(-1)).squeeze(-1)
    l = F.binary_cross_entropy_with_logits(z, cor, reduction="none")
    return (l * mask).sum() / mask.sum()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_skill = [40, 60, 50][seed % 3]
    hid = [64, 96, 80][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    T, steps = 30, 120
    bad_step = 15 + (37 * seed) % 90
    torch.manual_seed(seed)
    model = DKT(n_skill, 32, hid)
    difficulty = torch.randn(n_skill, generator=g)
    batches = []
    for step in range(steps):
        ability = torch.randn(bs, 1, generator=g)
        skill = torch.randint(0, n_skill, (bs, T + 1), generator=g)
        # learning: ability grows with practice
        prac = torch.arange(T + 1).float() / T
        p = torch.sigmoid(1.5 * ability + prac - difficulty[skill])
        corr = (torch.rand(bs, T + 1, generator=g) < p).float()
        elapsed = torch.exp(2.5 + 0.6 * torch.randn(bs, T, generator=g) - 0.5 * corr[:, :T])
        lens = torch.randint(T // 2, T + 1, (bs,), generator=g)
        mask = (torch.arange(T)[None, :] < lens[:, None]).float()
        inter = (1 + skill[:, :T] + n_skill * corr[:, :T].long()) * mask.long()
        if step == bad_step:
            rows = torch.randperm(bs, generator=g)[: max(2, bs // 8)]
            elapsed[rows, T // 3:] = elapsed[rows, T // 3:] - 3600.0   # DST / clock reset
        if fixed:
            elapsed = elapsed.clamp_min(0.0)
        elapsed = elapsed * mask
        tgt = torch.stack([skill[:, 1:].float(), corr[:, 1:], mask], -1)
        batches.append(((inter, elapsed), tgt))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=dkt_loss, batches=batches, steps=steps)
