"""Symbolic-music event language model (pitch / duration / bar event tokens, two-layer GRU
with a LayerNorm'd output head) trained with Adam at a learning rate copied from an SGD recipe.

Mechanism. The training script was written for plain SGD (lr 0.5-1.0, the Zaremba et al.
PTB-LSTM / char-RNN style setting) and later switched to `torch.optim.Adam` without
changing the lr. Adam normalises each gradient coordinate, so every weight moves by ~lr per
step: with lr 0.5-1.0 the recurrent and embedding weights take steps as large as the weights
themselves (update/weight ratios ~1 instead of ~1e-3). The first step already overshoots:
the head's weights behind the LayerNorm grow by ~lr per coordinate per step, so the logits reach
tens to hundreds, and the recurrent weights are kicked into the saturated range of the GRU
gates. The cross-entropy jumps from ~log(41) to 15-150 within a few steps and stays there,
oscillating, instead of learning the key/chord structure the fixed run learns (~0.6).

ORIGIN = None: the learning rate is one global setting applied to every layer; no single
module is the root cause.

Fix: the Adam learning rate the model should have had (2e-3). Nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("SGD learning rates (0.5-1.0, Zaremba et al. 2014 PTB LSTM / char-RNN recipes) kept after switching the "
          "optimizer to Adam; Adam's per-coordinate normalisation makes each step ~lr, so the loss "
          "jumps and stays far above its starting value (common forum/issue report).")

N_PITCH = 36            # three octaves from C3
DURS = [1, 2, 3, 4]     # in eighth notes
BAR = N_PITCH + len(DURS)
VOCAB = BAR + 1

PROGRESSIONS = [[0, 7, 9, 5], [0, 5, 7, 0], [9, 5, 0, 7], [0, 9, 5, 7]]   # I-V-vi-IV etc. (root offsets)
MINOR = {9}


def _piece(g, n_tokens):
    key = int(torch.randint(0, 12, (1,), generator=g))
    prog = PROGRESSIONS[int(torch.randint(0, len(PROGRESSIONS), (1,), generator=g))]
    pattern = [[0, 1, 2, 1], [0, 2, 1, 2], [0, 1, 2, 3]][int(torch.randint(0, 3, (1,), generator=g))]
    dur_pat = [[1, 1, 1, 1], [2, 1, 1, 0], [1, 0, 2, 1]][int(torch.randint(0, 3, (1,), generator=g))]
    toks = []
    bar = 0
    while len(toks) < n_tokens + 1:
        root = key + prog[bar % len(prog)]
        third = 3 if (prog[bar % len(prog)] in MINOR) else 4
        chord = [root, root + third, root + 7, root + 12]
        toks.append(BAR)
        for step in range(2):
            for i, d in zip(pattern, dur_pat):
                p = (chord[i] + 12 * step) % N_PITCH
                if torch.rand(1, generator=g).item() < 0.05:          # occasional passing tone
                    p = (p + 2) % N_PITCH
                toks.append(p)
                toks.append(N_PITCH + d)
        bar += 1
    return torch.tensor(toks[: n_tokens + 1])


class MusicLM(nn.Module):
    def __init__(self, emb, hidden):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, emb)
        self.rnn = nn.GRU(emb, hidden, num_layers=2, batch_first=True)
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, VOCAB)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.head(self.norm(h))


class SeqCE(nn.Module):
    def __init__(self):
        super().__init__()
        self.ce = nn.CrossEntropyLoss()

    def forward(self, logits, targets):
        return self.ce(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    emb = [32, 48, 24][seed % 3]
    hidden = [96, 64, 128][seed % 3]
    seq = [64, 48, 80, 56][seed % 4]
    bs = [8, 12, 6][(seed // 2) % 3]
    steps = 150 + 25 * (seed % 3)
    sgd_lr = [1.0, 0.5, 0.8, 1.0][seed % 4]
    batches = []
    for _ in range(steps):
        pieces = torch.stack([_piece(g, seq) for _ in range(bs)])
        batches.append((pieces[:, :-1], pieces[:, 1:]))
    model = MusicLM(emb, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3 if fixed else sgd_lr)
    return dict(model=model, optimizer=opt, loss_fn=SeqCE(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
