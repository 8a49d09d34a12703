"""RMTPP-style marked temporal point process hit by one event whose timestamp was
parsed as the Unix epoch (1970-01-01).

Mechanism. Event logs (user sessions / machine alarms) are turned into sequences in
arrival order and converted to inter-event gaps (timestamps are hours since epoch,
~4.7e5).  In one or two sequences of a single batch, an event's timestamp was missing
and the parser filled 0 (epoch).  The diff then produces one gap of -4.7e5 hours into
that event and one of +4.7e5 hours out of it, instead of ~1 hour.  The RMTPP
conditional intensity is lambda(t) = exp(v.h + w*(t - t_j) + b) and its closed-form
log-likelihood contains exp(v.h + b + w*dt)/w.  The data have an increasing hazard, so
w stays positive and w*dt ~ 1e4 overflows: the loss of that batch is inf (and the
log1p(gap) input feature of the negative gap is NaN), after which every parameter
would be NaN.  Before that batch the run is calm (loss decreasing smoothly); the
blow-up step is wherever the corrupt batch lands (1/4..1/2 of the run).

ORIGIN: None - no layer is at fault; the corrupt gaps enter as targets of the
likelihood (overflow in the loss) and as one input feature, not through any
misbehaving module.

Fix: clean the corrupt rows (the missing timestamp is re-imputed between its
neighbours, i.e. the true value).  Everything else, including the batch order, is
identical.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Missing timestamps parsed as epoch 0 (1970-01-01) in event logs; RMTPP "
          "(Du et al. KDD 2016) closed-form likelihood with exp(w*dt) overflowing on "
          "huge gaps, a known source of inf/NaN losses in TPP implementations.")

EPOCH_HOURS = 473_000.0


class RMTPP(nn.Module):
    def __init__(self, n_marks, emb, hid):
        super().__init__()
        self.mark_emb = nn.Embedding(n_marks, emb)
        self.rnn = nn.GRU(emb + 1, hid, batch_first=True)
        self.time_head = nn.Linear(hid, 1)           # v.h + b
        self.w = nn.Parameter(torch.tensor(0.1))     # RMTPP's scalar w
        self.mark_head = nn.Linear(hid, n_marks)

    def forward(self, gaps, marks):
        feat = torch.cat([self.mark_emb(marks), torch.log1p(gaps).unsqueeze(-1)], -1)
        h, _ = self.rnn(feat)
        return self.time_head(h).squeeze(-1), self.w.expand(gaps.shape[0], gaps.shape[1]), self.mark_head(h)


def rmtpp_nll(out, y):
    past, w, mark_logits = out
    next_gap, next_mark = y
    log_f = past + w * next_gap + (torch.exp(past) - torch.exp(past + w * next_gap)) / w
    ce = nn.functional.cross_entropy(mark_logits.reshape(-1, mark_logits.shape[-1]), next_mark.reshape(-1))
    return -log_f.mean() + ce


def _sequences(g, n_seq, length, n_marks):
    shape_k = 2.0                                     # gamma gaps: increasing hazard
    base = 0.4 + 1.2 * torch.rand(n_marks, generator=g)
    trans = torch.softmax(2.0 * torch.randn(n_marks, n_marks, generator=g), -1)
    marks = torch.zeros(n_seq, length + 1, dtype=torch.long)
    gaps = torch.zeros(n_seq, length + 1)
    marks[:, 0] = torch.randint(0, n_marks, (n_seq,), generator=g)
    for t in range(1, length + 1):
        marks[:, t] = torch.multinomial(trans[marks[:, t - 1]], 1, generator=g).squeeze(1)
        scale = base[marks[:, t - 1]] / shape_k
        u = torch.rand(n_seq, 2, generator=g)          # gamma(2) = sum of 2 exponentials
        gaps[:, t] = scale * (-torch.log(u[:, 0]) - torch.log(u[:, 1]))
    start = EPOCH_HOURS + 1000 * torch.rand(n_seq, 1, generator=g)
    times = start + torch.cumsum(gaps, 1)
    return times, marks


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(700 + seed)
    n_marks = [4, 6, 8][seed % 3]
    hid = [16, 24, 32][(seed + 1) % 3]
    bs = [16, 24][seed % 2]
    length = [24, 32][(seed // 2) % 2]
    steps = [150, 180, 210][seed % 3]
    bad_step = int(torch.randint(steps // 4, steps // 2, (1,), generator=g))
    n_bad = 1 + seed % 2
    times, marks = _sequences(g, bs * steps, length, n_marks)
    # corruption: in batch `bad_step`, n_bad sequences have one missing timestamp -> 0
    rows = bad_step * bs + torch.randperm(bs, generator=g)[:n_bad]
    cols = torch.randint(3, length, (n_bad,), generator=g)
    if not fixed:
        for r, c in zip(rows.tolist(), cols.tolist()):
            times[r, c] = 0.0                           # missing timestamp parsed as epoch
    # (fixed: the row keeps its true, imputed-between-neighbours timestamp)
    gaps = torch.diff(times, dim=1)                     # (n, length)
    mk = marks[:, 1:]
    inp_gaps, inp_marks = gaps[:, :-1], mk[:, :-1]
    tgt_gaps, tgt_marks = gaps[:, 1:], mk[:, 1:]
    model = RMTPP(n_marks, 8, hid)
    opt = torch.optim.Adam(model.parameters(), lr=[3e-3, 5e-3][seed % 2])
    batches = []
    for i in range(steps):
        s = slice(i * bs, (i + 1) * bs)
        batches.append(((inp_gaps[s], inp_marks[s]), (tgt_gaps[s], tgt_marks[s])))
    return dict(model=model, optimizer=opt, loss_fn=rmtpp_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
