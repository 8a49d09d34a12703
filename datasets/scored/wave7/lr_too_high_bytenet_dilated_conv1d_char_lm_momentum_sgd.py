"""A small ByteNet-style character language model (Kalchbrenner et al. 2016: embedding, a stack of
residual causal dilated 1-D convolutions with dilations 1, 2, 4, 8, a per-position softmax over the
alphabet) trained on text from a synthetic second-order Markov source with SGD + Nesterov momentum
0.9. The base recipe is lr = 0.5 at batch 16; the learning rate was multiplied by 8 by the linear
scaling rule for a planned batch of 128, but the batch was left at 16. With lr = 4 and momentum the
effective step is ~40x what the un-normalised residual conv stack tolerates: the first updates blow
up the residual branches, the logits grow by orders of magnitude per step and within a handful of
steps the loss and the weights are inf/NaN. With the base lr = 0.5 the same run trains smoothly."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Kalchbrenner et al. 2016 'Neural Machine Translation in Linear Time' (ByteNet) decoder; "
          "Goyal et al. 2017 linear lr scaling rule misapplied (lr scaled for a batch that was never used)")

V, E, C, T = 24, 32, 48, 64


class CausalBlock(nn.Module):
    def __init__(self, c, dilation):
        super().__init__()
        self.pad = dilation
        self.conv = nn.Conv1d(c, c, kernel_size=2, dilation=dilation)
        self.proj = nn.Conv1d(c, c, kernel_size=1)

    def forward(self, x):
        h = self.conv(F.pad(torch.relu(x), (self.pad, 0)))
        return x + self.proj(torch.relu(h))


class ByteNetLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.inp = nn.Conv1d(E, C, kernel_size=1)
        self.blocks = nn.Sequential(*[CausalBlock(C, d) for d in (1, 2, 4, 8)])
        self.out = nn.Conv1d(C, V, kernel_size=1)

    def forward(self, ids):
        x = self.inp(self.emb(ids).transpose(1, 2))
        return self.out(self.blocks(x))          # (B, V, T) logits


def make_source(g):
    logits = torch.randn(V, V, V, generator=g) * 2.0
    return torch.softmax(logits, -1)               # P(next | prev2, prev1)


def sample(g, probs, bs):
    seq = torch.randint(0, V, (bs, 2), generator=g)
    cols = [seq[:, 0], seq[:, 1]]
    for _ in range(T - 1):
        p = probs[cols[-2], cols[-1]]
        cols.append(torch.multinomial(p, 1, generator=g).squeeze(1))
    s = torch.stack(cols, 1)
    return s[:, :T], s[:, 1:T + 1]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ByteNetLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.5 if fixed else 4.0, momentum=0.9, nesterov=True)
    probs = make_source(g)
    steps = 150
    batches = [sample(g, probs, 16) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
