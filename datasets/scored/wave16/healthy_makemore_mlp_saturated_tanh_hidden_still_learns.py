"""Karpathy's "makemore" character-level MLP (Bengio et al. 2003 style: embedding table C,
concatenated 3-character context, one tanh hidden layer, softmax over 27 characters) with the
lecture-2 initialisation ``W1 = torch.randn(...)`` left unscaled.  Looks alarming, trains fine.

Why it looks broken
-------------------
With C ~ N(0, 1) and W1 ~ N(0, 1) the hidden pre-activations have a standard deviation of
sqrt(block_size * n_embd) ~ 5..7: 70-90 % of the tanh units sit at |h| > 0.97 from the first step
(the "white" histogram of lecture 3), and their local gradient 1 - h^2 is tiny.  A saturation
detector fires immediately.

Why it is healthy
-----------------
The output layer is initialised small (``W2 * 0.01``, ``b2 = 0``, the lecture-3 fix for the
"hockey-stick" initial loss), so the loss starts at ln(27).  The saturated units still carry a
sign pattern that is a deterministic, informative function of the 3-character context, the
readout learns on top of it, and the ~10-30 % non-saturated units plus C keep adapting.  The
loss falls steadily well below its starting value -- the lecture's point is only that it ends a
little worse than with the 5/3 / sqrt(fan_in) scaling, not that it fails.

ORIGIN is None (healthy run).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Karpathy, 'Neural Networks: Zero to Hero' makemore part 2/3 (MLP, W1 = torch.randn "
          "unscaled -> saturated tanh histogram, still trains)")


class MakemoreMLP(nn.Module):
    def __init__(self, vocab, block_size, n_embd, n_hidden, g):
        super().__init__()
        self.C = nn.Embedding(vocab, n_embd)
        self.fc1 = nn.Linear(block_size * n_embd, n_hidden)
        self.tanh = nn.Tanh()
        self.fc2 = nn.Linear(n_hidden, vocab)
        with torch.no_grad():
            self.C.weight.copy_(torch.randn(vocab, n_embd, generator=g))
            self.fc1.weight.copy_(torch.randn(n_hidden, block_size * n_embd, generator=g))   # unscaled
            self.fc1.bias.copy_(torch.randn(n_hidden, generator=g))
            self.fc2.weight.copy_(torch.randn(vocab, n_hidden, generator=g) * 0.01)
            self.fc2.bias.zero_()

    def forward(self, X):
        emb = self.C(X)                                   # (B, block, n_embd)
        h = self.tanh(self.fc1(emb.view(emb.shape[0], -1)))
        return self.fc2(h)


def _names_like(g, n_words, vocab):
    # "names": start-letter distribution + sparse letter-to-letter transitions, '.' (0) ends a word
    succ = torch.stack([torch.randperm(vocab - 1, generator=g)[:4] + 1 for _ in range(vocab)])
    p = torch.tensor([0.45, 0.3, 0.15, 0.1])
    words = []
    for _ in range(n_words):
        L = int(torch.randint(3, 9, (1,), generator=g))
        c, w = 0, []
        for _ in range(L):
            c = int(succ[c, torch.multinomial(p, 1, generator=g)])
            w.append(c)
        words.append(w + [0])
    return words


def build(seed: int, fixed: bool = False) -> dict:
    # `fixed` is ignored: nothing is broken.
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2718 + seed)
    vocab, block_size = 27, 3
    n_embd, n_hidden = [(10, 200), (16, 128), (8, 300)][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = [0.1, 0.1, 0.05][seed % 3]
    steps = 200

    Xs, Ys = [], []
    for w in _names_like(g, 3000, vocab):
        context = [0] * block_size
        for ch in w:
            Xs.append(list(context))
            Ys.append(ch)
            context = context[1:] + [ch]
    Xtr, Ytr = torch.tensor(Xs), torch.tensor(Ys)
    batches = []
    for _ in range(steps):
        ix = torch.randint(0, Xtr.shape[0], (bs,), generator=g)
        batches.append((Xtr[ix], Ytr[ix]))

    model = MakemoreMLP(vocab, block_size, n_embd, n_hidden, g)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
