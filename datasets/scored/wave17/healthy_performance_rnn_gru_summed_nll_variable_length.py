"""Healthy: Performance-RNN-style autoregressive event model (embedding -> 2-layer GRU -> softmax
over event tokens) on variable-length symbolic-music sequences, padded, loss = NLL summed over the
real (unpadded) tokens of the batch divided by the number of sequences, Adam.

Looks alarming: the loss is a per-sequence total, so it swings by up to ~2x from batch to
batch depending on how long that batch's pieces are (lengths 24..56), and early batches can look
"better" than later ones. Underneath, the per-token NLL falls steadily. Nothing to fix.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Magenta Performance RNN / music LSTM training logs with per-sequence summed NLL over variable-length pieces"


class EventGRU(nn.Module):
    def __init__(self, v, e, h):
        super().__init__()
        self.emb = nn.Embedding(v, e)
        self.rnn = nn.GRU(e, h, 2, batch_first=True)
        self.out = nn.Linear(h, v)

    def forward(self, x):
        return self.out(self.rnn(self.emb(x))[0])


def summed_nll(logits, y):
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100, reduction="sum")
    return nll / y.shape[0]


def _piece(g, L, V):
    key = int(torch.randint(0, 5, (1,), generator=g))
    scale = torch.tensor([0, 2, 4, 5, 7, 9, 11, 12]) + key
    step = torch.randint(-1, 2, (L,), generator=g)
    idx = (torch.cumsum(step, 0) % 8)
    return scale[idx] % V


def build(seed, fixed=False):
    cfg = [dict(e=32, h=64, lr=3e-3, bs=16), dict(e=24, h=96, lr=2e-3, bs=8), dict(e=48, h=48, lr=4e-3, bs=24)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    V = 16
    model = EventGRU(V, cfg["e"], cfg["h"])
    steps = 120
    batches = []
    for i in range(steps):
        maxlen = int(torch.randint(32, 57, (1,), generator=g))
        lens = torch.randint(3 * maxlen // 4, maxlen + 1, (cfg["bs"],), generator=g)
        x = torch.zeros(cfg["bs"], maxlen, dtype=torch.long)
        y = torch.full((cfg["bs"], maxlen), -100, dtype=torch.long)
        for b, L in enumerate(lens.tolist()):
            p = _piece(g, L + 1, V)
            x[b, :L], y[b, :L] = p[:-1], p[1:]
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=summed_nll, batches=batches, steps=steps)
