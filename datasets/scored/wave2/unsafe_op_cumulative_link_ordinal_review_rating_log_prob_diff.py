"""Cumulative-link (proportional-odds) ordinal regression head on a review-text bag-of-words model
predicting 1-5 star ratings. The head computes all class probabilities the textbook way,
P(y=k) = sigmoid(c_k - f) - sigmoid(c_{k-1} - f) with free cutpoints c, takes torch.log of the
whole vector, and the loss gathers the target's log-probability. The run trains calmly until the
score f of some strongly worded review moves more than ~17 units away from a cutpoint: in float32
sigmoid(c_4 - f) then rounds to exactly 1.0 and the 5-star probability 1 - sigmoid(c_4 - f) is
exactly 0. That entry is not the target, so the loss stays finite, but the backward of log at it
computes 0 * (1/0) = NaN, which flows into the cutpoints and the whole network; every later loss
is NaN. The fixed run only clamps the probabilities with clamp_min(1e-7) before the log, as
spacecutter and most ordinal-regression code do."""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "ordinal_head"
SOURCE = "spacecutter (PyTorch ordinal regression) cumulative-link loss and its AscensionCallback / clamp; 'NaN gradients from log of a difference of sigmoids' reports (PyTorch forums)"


class CumulativeLink(nn.Module):
    def __init__(self, n_classes, safe):
        super().__init__()
        self.safe = safe
        self.cutpoints = nn.Parameter(torch.linspace(-1.5, 1.5, n_classes - 1))

    def forward(self, f):
        s = torch.sigmoid(self.cutpoints - f)                       # B, K-1
        ones = torch.ones_like(s[:, :1])
        cdf = torch.cat([torch.zeros_like(ones), s, ones], 1)       # B, K+1
        p = cdf[:, 1:] - cdf[:, :-1]
        if self.safe:
            p = p.clamp_min(1e-7)
        return torch.log(p)


class ReviewRater(nn.Module):
    def __init__(self, vocab, d, safe):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, d, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 1))
        self.ordinal_head = CumulativeLink(5, safe)

    def forward(self, tokens):
        return self.ordinal_head(self.mlp(self.bag(tokens)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab = [500, 400, 600][seed % 3]
    d = [32, 24, 48][seed % 3]
    L = [20, 16, 24][seed % 3]
    bs = [64, 48, 80][seed % 3]
    steps = [200, 250, 160][seed % 3]
    lr = [0.03, 0.04, 0.03][seed % 3]
    sentiment = torch.randn(vocab, generator=g)
    probs = torch.tensor([0.30, 0.06, 0.015, 0.12, 0.505])
    batches = []
    for s in range(steps):
        y = torch.multinomial(probs, bs, replacement=True, generator=g)
        # words drawn with a bias towards the rating's sentiment
        target_sent = (y.float() - 2.0).unsqueeze(1)
        cand = torch.randint(0, vocab, (bs, L, 4), generator=g)
        pick = (-(sentiment[cand] - target_sent.unsqueeze(-1)).abs()).argmax(-1)
        tokens = cand.gather(-1, pick.unsqueeze(-1)).squeeze(-1)
        batches.append((tokens, y))
    model = ReviewRater(vocab, d, safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt,
                loss_fn=lambda logp, y: -logp.gather(1, y.unsqueeze(1)).mean(),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
