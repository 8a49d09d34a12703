"""Bengio-style neural probabilistic language model (NPLM): concatenated embeddings of the previous
n-1 tokens -> Linear -> ReLU -> Linear -> softmax over the vocabulary, no direct connections.
The user swapped the original tanh hidden layer for ReLU but kept the large plain-SGD learning
rate tuned for the tanh version.

Mechanism: the first large updates push the hidden pre-activations negative for every context;
the ReLU units die, the hidden layer outputs zeros, and only the output bias keeps learning, so the
model is stuck at the (uniform) unigram distribution: the loss plateaus at ~log V.
ORIGIN: act, the hidden ReLU whose units die.
Fix: a learning rate suited to ReLU (10-20x smaller).
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "dead_relu"
ORIGIN = "act"
SOURCE = "Bengio et al. 2003 NPLM re-implemented in PyTorch with ReLU replacing tanh but the tanh-era SGD lr; dying ReLU"

class NPLM(nn.Module):
    def __init__(s, V, m, n, H):
        super().__init__()
        s.emb = nn.Embedding(V, m); s.hidden = nn.Linear(n * m, H); s.act = nn.ReLU(); s.out = nn.Linear(H, V)
    def forward(s, ctx):
        return s.out(s.act(s.hidden(s.emb(ctx).flatten(1))))

def build(seed: int, fixed: bool = False) -> dict:
    n, m, H, lr, B = [(3, 16, 64, 2.0, 64), (4, 24, 96, 2.5, 48), (2, 16, 128, 3.0, 96)][seed % 3]
    torch.manual_seed(seed)
    V, steps = 60, 150
    model = NPLM(V, m, n, H)
    g = torch.Generator().manual_seed(40 + seed)
    nxt = torch.randint(0, V, (V, 2), generator=g)
    batches = []
    for _ in range(steps):
        s = torch.empty(B, n + 1, dtype=torch.long); s[:, 0] = torch.randint(0, V, (B,), generator=g)
        for t in range(n):
            s[:, t + 1] = nxt[s[:, t], torch.randint(0, 2, (B,), generator=g)]
        batches.append((s[:, :-1], s[:, -1]))
    opt = torch.optim.SGD(model.parameters(), lr=lr / 15 if fixed else lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
