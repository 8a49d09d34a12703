"""A GRU language model over a synthetic 48-symbol Markov source is trained to maximise the
per-sequence likelihood, which the author writes literally as P(seq) = prod_t p(x_t | x_<t):
the model ends in a Softmax module and the loss takes torch.prod over the gathered token
probabilities and then .log(). A length curriculum feeds 12-token sequences first and switches
to 72-token sequences later. Short sequences are calm (the product stays around 1e-12..1e-20),
but for the long bucket the product of ~72 probabilities of order 0.1 falls below the smallest
fp32 denormal (1.4e-45), underflows to exactly 0, and log(0) = -inf makes the loss +inf (the
backward turns it into NaN). The fix is the standard fused form: a LogSoftmax head and a sum of
log-probabilities, everything else identical."""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "prob"
SOURCE = ("Known pattern: 'log of product of probabilities underflows to -inf' (PyTorch forums / "
          "HMM & CTC implementations that must work in log space); sequence likelihood written as "
          "torch.prod(p).log() instead of a sum of log_softmax.")

V, E, H = 48, 32, 64


class GRULM(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.rnn = nn.GRU(E, H, batch_first=True)
        self.head = nn.Linear(H, V)
        self.prob = nn.LogSoftmax(-1) if fixed else nn.Softmax(-1)

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        return self.prob(self.head(h))


def make_source(g):
    # each symbol has 8 plausible successors -> entropy ~ log 8 per token
    succ = torch.stack([torch.randperm(V, generator=g)[:8] for _ in range(V)])
    w = torch.rand(V, 8, generator=g) + 0.5
    return succ, w / w.sum(1, keepdim=True)


def sample(g, succ, w, B, T):
    x = torch.empty(B, T + 1, dtype=torch.long)
    x[:, 0] = torch.randint(0, V, (B,), generator=g)
    for t in range(T):
        j = torch.multinomial(w[x[:, t]], 1, generator=g).squeeze(1)
        x[:, t + 1] = succ[x[:, t], j]
    return x[:, :-1], x[:, 1:]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    succ, w = make_source(g)
    model = GRULM(fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps = 120
    batches = []
    for s in range(steps):
        T = 12 if s < 70 else 72  # length curriculum: short bucket first
        batches.append(sample(g, succ, w, 16, T))

    def loss_fn(out, y):
        if fixed:
            ll = out.gather(-1, y.unsqueeze(-1)).squeeze(-1).sum(1)
        else:
            p = out.gather(-1, y.unsqueeze(-1)).squeeze(-1)
            ll = torch.prod(p, dim=1).log()
        return -(ll / y.shape[1]).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
