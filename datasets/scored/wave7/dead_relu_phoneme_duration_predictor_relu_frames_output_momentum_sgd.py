"""A FastSpeech-style phoneme duration predictor (phoneme embedding, one self-attention encoder layer
with a padding mask, a linear projection) that outputs durations in frames through a final ReLU
"because durations cannot be negative", trained on a masked MSE with SGD + momentum 0.9 at lr = 0.05.
The durations are 2-14 frames while the initial outputs are ~0, so the first gradients on the output
projection are large and all of one sign; with momentum the first steps overshoot to far too long
durations, and the correction drives the projection's pre-activation below zero for every phoneme of
every utterance. From then on the ReLU outputs 0 everywhere, passes no gradient, and the loss stays
at E[duration^2] for the rest of the run. With lr = 5e-3 the output stays in the ReLU's active
region and the predictor learns."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "out"
SOURCE = ("Ren et al. 2019 'FastSpeech' duration predictor (MSE on durations); ReLU used to force "
          "non-negative outputs dies after large early SGD/momentum steps")

V, D, T_MAX = 30, 32, 20


class Encoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, -1)
        s = (q @ k.transpose(1, 2)) / math.sqrt(x.shape[-1])
        a = torch.softmax(s.masked_fill(~mask.unsqueeze(1), float("-inf")), -1)
        x = self.ln1(x + self.o(a @ v))
        return self.ln2(x + self.ff(x))


class DurationPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(T_MAX, D) * 0.1)
        self.enc = Encoder(D)
        self.out = nn.Linear(D, 1)
        self.act = nn.ReLU()

    def forward(self, ids, mask):
        h = self.enc(self.emb(ids) + self.pos, mask)
        return self.act(self.out(h)).squeeze(-1)        # frames, forced non-negative


def masked_mse(pred, y):
    dur, mask = y
    m = mask.float()
    return (((pred - dur) ** 2) * m).sum() / m.sum()


def make_batch(g, base, bs):
    lengths = torch.randint(8, T_MAX + 1, (bs,), generator=g)
    mask = torch.arange(T_MAX).unsqueeze(0) < lengths.unsqueeze(1)
    ids = torch.randint(1, V, (bs, T_MAX), generator=g) * mask
    dur = base[ids]
    # phrase-final lengthening and a stressed-neighbour effect
    last = F.one_hot(lengths - 1, T_MAX).float()
    dur = dur + 3.0 * last + 1.0 * (F.pad(ids, (1, 0))[:, :-1] % 3 == 0).float()
    return (ids, mask), (dur * mask, mask)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DurationPredictor()
    opt = torch.optim.SGD(model.parameters(), lr=5e-3 if fixed else 5e-2, momentum=0.9)
    base = torch.randint(2, 12, (V,), generator=g).float()
    steps = 150
    batches = [make_batch(g, base, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=masked_mse, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
