"""A word-level GRU language model uses the well-known "initialise the output bias to the
unigram log-frequencies" trick so that the first steps do not waste time learning token
frequencies. The counts are taken from an 8192-token slice of the training stream, but the
line that should read `bias.copy_(counts.log())` was written as `bias.copy_(counts)`: the
output bias starts at the raw counts (up to ~1000 for frequent tokens, a few tens for rare ones). The
softmax is therefore pinned to the most frequent tokens, the loss starts in the hundreds and
the per-step Adam updates (~1e-3 per parameter) cannot move the logits by the hundreds of nats
needed, so the loss is essentially flat for the whole run although nothing is NaN. The fix only
restores the log in the bias initialisation.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "lm_head"
SOURCE = ("Karpathy 'A Recipe for Training Neural Networks' (init the final-layer bias to the "
          "data's log-frequencies) implemented without the log")

V, E, Hd, T, B = 64, 32, 64, 32, 16


class GRULM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.rnn = nn.GRU(E, Hd, batch_first=True)
        self.lm_head = nn.Linear(Hd, V)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.lm_head(h)


def _stream(g, n):
    # Zipfian unigram law mixed with a deterministic "collocation" successor
    zipf = 1.0 / torch.arange(1, V + 1).float()
    zipf = zipf / zipf.sum()
    succ = torch.randperm(V, generator=g)
    out = torch.empty(n, dtype=torch.long)
    out[0] = 0
    coll = torch.rand(n, generator=g) < 0.5
    draws = torch.multinomial(zipf, n, replacement=True, generator=g)
    for i in range(1, n):
        out[i] = succ[out[i - 1]] if coll[i] else draws[i]
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GRULM()
    stream = _stream(g, 20000)
    counts = torch.bincount(stream[:8192], minlength=V).float().clamp_min(1.0)
    with torch.no_grad():
        if fixed:
            model.lm_head.bias.copy_(counts.log())
        else:
            model.lm_head.bias.copy_(counts)          # root cause: forgot the .log()
    steps = 150
    starts = torch.randint(0, len(stream) - T - 1, (steps, B), generator=g)
    batches = []
    for s in range(steps):
        idx = starts[s][:, None] + torch.arange(T + 1)[None]
        seq = stream[idx]
        batches.append((seq[:, :-1], seq[:, 1:]))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
