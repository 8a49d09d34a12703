"""DGA-domain LSTM classifier whose char embeddings are multiplied by sqrt(d_model).

Mechanism: the Woodbridge et al. (2016) DGA detector: character embedding -> LSTM -> dense
-> sigmoid (BCEWithLogitsLoss). The user's embedding wrapper was copied from a Transformer
codebase and returns `self.emb(x) * math.sqrt(d_model)` (the "Attention is all you need"
scaling that compensates for adding positional encodings). With nn.Embedding's N(0, 1)
init and d_model=128..256 the LSTM inputs have std 11..16, so the gate pre-activations
W_ih x have std ~9-21 (var = d_model^2 / (3 * hidden) with the default LSTM init): the
input/forget/output sigmoids and the cell tanh sit in their flat tails (|pre-activation|
> 5 for most units at every time step). Their derivatives are
~1e-3, so almost no gradient flows into W_ih, the embeddings or across time; the final
hidden state is a near-binary pattern of the last characters and the loss stays at the
class-prior entropy.

ORIGIN: `lstm`, the LSTM whose gate non-linearities saturate on the over-scaled inputs.

Fix: plain embeddings (no sqrt(d_model) factor), i.e. pre-activations of order 1; the same
LSTM, data and optimiser.
"""
import math

import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "lstm"
SOURCE = ("Woodbridge et al. 2016 'Predicting domain generation algorithms with long "
          "short-term memory networks' (char embedding + LSTM); Transformer-style "
          "embedding * sqrt(d_model) wrapper reused in front of an LSTM")

ALPHA = "abcdefghijklmnopqrstuvwxyz0123456789-."
TLDS = ["com", "net", "org", "ru", "info", "biz", "de", "cn"]
SYLL = ["goo", "gle", "face", "book", "ama", "zon", "mi", "cro", "soft", "net", "flix",
        "you", "tube", "wiki", "pedia", "red", "dit", "linked", "in", "app", "le", "cloud",
        "flare", "shop", "ify", "pay", "pal", "mail", "news", "online", "store", "web"]


class ScaledEmbedding(nn.Module):
    def __init__(self, vocab, d_model, scale):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model, padding_idx=0)
        self.scale = math.sqrt(d_model) if scale else 1.0

    def forward(self, x):
        return self.emb(x) * self.scale


class DGALSTM(nn.Module):
    def __init__(self, d_model, hidden, scale):
        super().__init__()
        self.embed = ScaledEmbedding(len(ALPHA) + 1, d_model, scale)
        self.lstm = nn.LSTM(d_model, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        _, (h, _) = self.lstm(self.embed(x))
        return self.out(h[-1]).squeeze(1)


def _domain(g, dga):
    if dga:
        n = int(torch.randint(10, 20, (1,), generator=g))
        idx = torch.randint(0, 26, (n,), generator=g)  # random-letter DGA (e.g. Cryptolocker)
        name = "".join(ALPHA[int(i)] for i in idx)
    else:
        k = int(torch.randint(1, 4, (1,), generator=g))
        name = "".join(SYLL[int(torch.randint(0, len(SYLL), (1,), generator=g))] for _ in range(k))
    return name + "." + TLDS[int(torch.randint(0, len(TLDS), (1,), generator=g))]


def _batch(g, n, max_len):
    y = (torch.rand(n, generator=g) < 0.5).float()
    x = torch.zeros(n, max_len, dtype=torch.long)
    for i in range(n):
        d = _domain(g, bool(y[i]))[:max_len]
        ids = [ALPHA.index(c) + 1 for c in d]
        x[i, max_len - len(ids):] = torch.tensor(ids)  # left-pad like Keras pad_sequences
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(15000 + seed)
    cfg = [
        dict(d_model=128, hidden=64, bs=32, lr=2e-3, steps=100, max_len=24),
        dict(d_model=256, hidden=48, bs=48, lr=1e-3, steps=90, max_len=28),
        dict(d_model=192, hidden=96, bs=24, lr=3e-3, steps=110, max_len=24),
    ][seed % 3]
    model = DGALSTM(cfg["d_model"], cfg["hidden"], scale=not fixed)
    batches = [_batch(g, cfg["bs"], cfg["max_len"]) for _ in range(cfg["steps"])]
    optimizer = torch.optim.RMSprop(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=optimizer, loss_fn=nn.BCEWithLogitsLoss(),
                batches=batches, steps=cfg["steps"])
