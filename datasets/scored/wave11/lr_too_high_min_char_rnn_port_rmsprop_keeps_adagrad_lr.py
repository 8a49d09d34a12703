"""Vanilla char-level RNN language model (one-hot characters -> nn.RNN tanh, 64 units -> linear softmax
over 20 characters, 32-character windows), ported from min-char-rnn, whose Adagrad uses
learning_rate = 1e-1. The port swapped in torch.optim.RMSprop but kept lr = 0.1, 50x char-rnn's
RMSprop default of 2e-3. Without bias correction RMSprop's first update is ~10*lr = 1.0 per weight,
for weights initialised in +-0.125: the first step multiplies the norm of every weight matrix by ~14
(update/weight ratio ~14, vs ~0.3 at lr 2e-3), the loss jumps from log(20) ~ 3.0 to 15-50, ~95% of
the tanh hidden units end up pinned at +-1, and the read-out layer keeps being thrown around by ~10%
of its norm every step. The loss crawls back down but stays above its starting value for the whole
run (a noisy plateau at 3.5-4.5 nats, no NaN), while the same model at lr 2e-3 reaches ~0.9. The
fixed run only lowers the lr to 2e-3.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("karpathy/min-char-rnn (Adagrad, learning_rate = 1e-1) vs karpathy/char-rnn train.lua "
          "(rmsprop, learning_rate 2e-3); PyTorch RMSprop has no bias correction, so its first steps "
          "are ~lr/sqrt(1-alpha) = 10x lr per weight")

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "big", "red", "house", "and",
         "small", "bird", "sang", "in", "tree", "over", "hill", "old", "man", "saw", "boat"]
CHARS = sorted(set("".join(WORDS)) | {" ", "."})
V = len(CHARS)
SEQ, H = 32, 64


def _text(g, n_sent=600):
    out = []
    for _ in range(n_sent):
        L = int(torch.randint(3, 9, (1,), generator=g))
        idx = torch.randint(0, len(WORDS), (L,), generator=g)
        out.append(" ".join(WORDS[int(i)] for i in idx) + ". ")
    s = "".join(out)
    return torch.tensor([CHARS.index(c) for c in s])


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(V, H, batch_first=True)
        self.head = nn.Linear(H, V)
    def forward(self, ids):
        x = F.one_hot(ids, V).float()
        h, _ = self.rnn(x)
        return self.head(h)


def loss_fn(logits, y):
    return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    data = _text(g)
    model = CharRNN()
    opt = torch.optim.RMSprop(model.parameters(), lr=2e-3 if fixed else 1e-1)
    steps, B = 200, 32
    batches = []
    for _ in range(steps):
        st = torch.randint(0, len(data) - SEQ - 1, (B,), generator=g)
        chunk = torch.stack([data[s:s + SEQ + 1] for s in st.tolist()])
        batches.append((chunk[:, :-1], chunk[:, 1:]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
