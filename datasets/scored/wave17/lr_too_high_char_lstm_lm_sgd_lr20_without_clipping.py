"""Character-level LSTM language model (embedding -> 2-layer LSTM -> tied-size decoder), the
pytorch/examples word_language_model recipe: plain SGD with lr=20, cross-entropy.

Mechanism: that recipe is only stable because it clips the gradient norm to 0.25 every step; the
user dropped clip_grad_norm_. With lr 20-40 (across seeds) the raw gradient steps are ~100x
too large relative to the weights: the loss jumps up instead of down, the LSTM gates saturate and
the run either diverges to inf/NaN or thrashes far above its starting loss. ORIGIN None: the
optimizer step size, not one module. Fix: lr 1 (the update size the clipped recipe actually
produced).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "pytorch/examples word_language_model (SGD lr=20 with --clip 0.25); issues where removing clipping makes the LM loss explode"

TEXT = ("the quick brown fox jumps over the lazy dog. a stitch in time saves nine. "
        "all that glitters is not gold. to be or not to be, that is the question. ") * 20


class CharLSTM(nn.Module):
    def __init__(self, v, e, h, layers):
        super().__init__()
        self.emb = nn.Embedding(v, e)
        self.rnn = nn.LSTM(e, h, layers, batch_first=True)
        self.dec = nn.Linear(h, v)

    def forward(self, x):
        return self.dec(self.rnn(self.emb(x))[0])


def build(seed, fixed=False):
    cfg = [dict(e=32, h=128, L=2, lr=20.0, bs=16, T=32), dict(e=48, h=96, L=2, lr=40.0, bs=32, T=24), dict(e=32, h=128, L=2, lr=40.0, bs=24, T=40)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab = sorted(set(TEXT))
    ids = torch.tensor([vocab.index(c) for c in TEXT])
    model = CharLSTM(len(vocab), cfg["e"], cfg["h"], cfg["L"])
    steps = 120
    batches = []
    for _ in range(steps):
        st = torch.randint(0, len(ids) - cfg["T"] - 1, (cfg["bs"],), generator=g)
        seq = torch.stack([ids[s: s + cfg["T"] + 1] for s in st.tolist()])
        batches.append((seq[:, :-1], seq[:, 1:]))
    opt = torch.optim.SGD(model.parameters(), lr=1.0 if fixed else cfg["lr"])
    loss_fn = lambda logits, y: F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
