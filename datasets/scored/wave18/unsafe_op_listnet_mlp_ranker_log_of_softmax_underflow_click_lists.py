"""ListNet ranker (top-1 Plackett-Luce cross entropy) with a hand-written log(softmax(scores)).

Mechanism: a three-layer MLP scores every document of an impression list (24 standardised
query-document features per candidate) and is trained on click logs with the ListNet top-1
cross entropy: the target is the click distribution of the list (exactly one clicked
document, so every other document has target mass 0).  The loss is written the
"textbook" way, -(P_y * torch.log(torch.softmax(s))).sum(), instead of a fused
log_softmax.  Its optimum pushes the unclicked documents to -inf, so with Adam the score
gap between the clicked and the worst document keeps widening while the loss falls calmly.
Once a gap passes ~104 the fp32 softmax underflows to exactly 0, torch.log returns -inf and
0 * -inf = NaN: the run goes non-finite after a long healthy stretch (step ~100-150,
depending on lr / width per seed).

ORIGIN is None: the unsafe op (log of an underflowed softmax) lives in the loss, not in a
module of the model; the scorer itself is well behaved.

Fix: F.log_softmax (log-sum-exp), which stays finite (e.g. -130) where log(softmax) gives -inf.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("ListNet top-1 loss (Cao et al., ICML 2007) as re-implemented on click logs; the "
          "well-known torch.log(F.softmax(x)) underflow pattern (PyTorch docs: log_softmax is "
          "the numerically stable form), producing late NaN losses in LTR training.")


class MLPScorer(nn.Module):
    def __init__(self, n_feat, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_feat, width), nn.ReLU(),
                                 nn.Linear(width, width), nn.ReLU(),
                                 nn.Linear(width, 1))

    def forward(self, x):  # x: (queries, docs, feats)
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    n_feat = 20
    width = [64, 96, 48][seed]
    lr = [2.5e-2, 1e-2, 3e-2][seed]
    n_q = [16, 24, 20][seed]
    n_docs = 24
    steps = [220, 180, 150][seed]

    w_true = torch.randn(n_feat, generator=g)

    def make_batch():
        x = torch.randn(n_q, n_docs, n_feat, generator=g)
        u = x @ w_true / n_feat ** 0.5
        # click log: exactly one clicked document per impression list (the best one)
        rel = F.one_hot(u.argmax(dim=1), n_docs).float()
        return x, rel

    batches = [make_batch() for _ in range(steps)]
    model = MLPScorer(n_feat, width)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(scores, rel):
        p_true = rel / rel.sum(dim=1, keepdim=True)
        if fixed:
            log_p = F.log_softmax(scores, dim=1)
        else:
            log_p = torch.log(torch.softmax(scores, dim=1))
        return -(p_true * log_p).sum(dim=1).mean()

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
