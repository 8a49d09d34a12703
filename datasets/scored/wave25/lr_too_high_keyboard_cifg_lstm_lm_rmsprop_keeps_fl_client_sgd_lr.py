"""Mobile-keyboard next-word prediction with a hand-written CIFG-LSTM language model (coupled
input and forget gate, i = 1 - f, as in the Gboard federated keyboard LM), tied to a small
vocabulary embedding, trained centrally on proxy data before federated fine-tuning.

Mechanism: the centralised pre-training script was switched from plain SGD (the federated
client optimiser, lr 0.3-0.4) to RMSprop for speed, but the learning rate was kept. RMSprop
normalises each parameter's step to ~lr regardless of the gradient scale, so every weight
moves by ~0.3-0.4 per step - update/weight ratios of ~1 for weights of size 0.1. The gates are
driven to saturation, the embedding and softmax weights overshoot on every step, and the loss
never goes below its starting value (it hovers around or above ln(V), sometimes non-finite).

ORIGIN: None (lr_too_high: every parameter is overshot at once).

Fix: an RMSprop learning rate (3e-3); the same model, data, steps and optimiser otherwise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Hard et al. 2018 'Federated Learning for Mobile Keyboard Prediction' (CIFG-LSTM, "
          "client SGD); optimiser swapped to RMSprop/Adam while keeping the SGD learning rate, "
          "a common forum report ('loss stuck at log(vocab) after switching to RMSprop')")


class CIFGCell(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.x2h = nn.Linear(d_in, 3 * hidden)
        self.h2h = nn.Linear(hidden, 3 * hidden, bias=False)

    def forward(self, x, h, c):
        f, o, gc = (self.x2h(x) + self.h2h(h)).chunk(3, -1)
        f = torch.sigmoid(f + 1.0)
        c = f * c + (1 - f) * torch.tanh(gc)  # coupled input/forget gate
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class CIFGLM(nn.Module):
    def __init__(self, V, d, hidden):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        self.cell = CIFGCell(d, hidden)
        self.proj = nn.Linear(hidden, d)
        self.out = nn.Linear(d, V)

    def forward(self, tokens):
        B, T = tokens.shape
        e = self.emb(tokens)
        h = e.new_zeros(B, self.cell.h2h.in_features)
        c = torch.zeros_like(h)
        hs = []
        for t in range(T):
            h, c = self.cell(e[:, t], h, c)
            hs.append(h)
        return self.out(self.proj(torch.stack(hs, 1)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    V = [200, 160, 240][seed % 3]
    d = [32, 24, 32][seed % 3]
    hidden = [64, 48, 80][seed % 3]
    lr = [0.3, 0.4, 0.35][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 150
    T = 10
    model = CIFGLM(V, d, hidden)
    # synthetic typing sessions: Markov chain with a fixed successor per word + 15% noise
    succ = torch.randperm(V, generator=g)
    batches = []
    for _ in range(steps):
        toks = torch.empty(bs, T + 1, dtype=torch.long)
        toks[:, 0] = torch.randint(0, V, (bs,), generator=g)
        for t in range(T):
            nxt = succ[toks[:, t]]
            noise = torch.rand(bs, generator=g) < 0.15
            toks[:, t + 1] = torch.where(noise, torch.randint(0, V, (bs,), generator=g), nxt)
        batches.append((toks[:, :-1], toks[:, 1:]))

    def loss_fn(logits, target):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))

    opt = torch.optim.RMSprop(model.parameters(), lr=3e-3 if fixed else lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
