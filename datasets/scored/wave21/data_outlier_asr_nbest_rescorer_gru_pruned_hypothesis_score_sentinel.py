"""Discriminative N-best rescorer for ASR (the language side of a speech recogniser): each
hypothesis is read by a GRU over its tokens, its final state is concatenated with the decoder's
per-frame acoustic and LM log-scores, and a linear layer scores it; a softmax over the N-best list
is trained with cross-entropy towards the oracle (lowest-WER) hypothesis; SGD with momentum.

Mechanism: the N-best dump comes from a decoder (k2/icefall-style) that writes -inf as the
acoustic score of hypotheses whose path was pruned from the lattice.  One batch of lists
containing such hypotheses arrives mid-run: the scoring layer turns the -inf feature into a
+-inf logit; even when the softmax gives that hypothesis probability 0, the weight gradient
0 * (-inf) is NaN, SGD writes NaN into the scoring layer and every later loss is NaN.
ORIGIN: None -- a corrupt batch, not a module.
Fix: filter the non-finite score (the same batch with pruned hypotheses' scores replaced by the
list's worst real score).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("k2/icefall and ESPnet N-best rescoring dumps with -inf pruned-path scores; "
          "discriminative LM rescoring (Ogawa et al., Variani et al.) setups")


class Rescorer(nn.Module):
    def __init__(self, V, d):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        self.gru = nn.GRU(d, d, batch_first=True)
        self.score = nn.Linear(d + 2, 1)

    def forward(self, toks, feats):
        B, N, T = toks.shape
        _, h = self.gru(self.emb(toks.view(B * N, T)))
        z = torch.cat([h[-1].view(B, N, -1), feats], -1)
        return self.score(z).squeeze(-1)       # (B, N) hypothesis logits


def build(seed: int, fixed: bool = False) -> dict:
    d, bs, N, lr, bad_step = [(16, 8, 5, 0.05, 25), (12, 6, 6, 0.03, 38), (16, 10, 4, 0.05, 17)][seed % 3]
    V, T = 30, 8
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    model = Rescorer(V, d)
    steps = 60
    batches = []
    for t in range(steps):
        toks = torch.randint(0, V, (bs, N, T), generator=g)
        # the oracle hypothesis has the fewest "error tokens" (ids >= 20) and a better AM score
        n_err = (toks >= 20).float().sum(-1)
        am = -n_err * 0.5 + 0.3 * torch.randn(bs, N, generator=g)   # per-frame log-score
        lm = -n_err * 0.2 + 0.3 * torch.randn(bs, N, generator=g)
        oracle = n_err.argmin(-1)
        if t == bad_step:
            lists = torch.arange(2 + seed)
            am[lists, N - 1] = float("-inf")                          # pruned-path score
            if fixed:
                pruned = ~torch.isfinite(am)
                worst = am.masked_fill(pruned, float("inf")).min(-1, keepdim=True).values
                am = torch.where(pruned, worst.expand_as(am), am)
        batches.append(((toks, torch.stack([am, lm], -1)), oracle))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(logits, y):
        return F.cross_entropy(logits, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
