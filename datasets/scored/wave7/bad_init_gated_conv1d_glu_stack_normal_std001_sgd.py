"""A plain (non-residual) stack of four gated 1-D convolution layers (Dauphin et al. 2017 GLU:
conv -> A * sigmoid(B)) classifies token sequences by the sign of their summed word polarity, with
mean pooling over time and a linear read-out, trained with SGD + momentum. Every conv weight was
initialised from N(0, 0.01^2), a default carried over from old word2vec/TF1 code. With fan-in
3 * 32 = 96 each layer multiplies the activation scale by about 0.01 * sqrt(96) * 0.5 ~ 0.05 (the
sigmoid gate sits at 0.5), so after four layers the signal reaching the pooled read-out is ~1e-5 of the
input and the backward signal to the lower layers shrinks the same way. SGD cannot grow the weights
out of this in the run, and the loss stays at log 2. Kaiming (He) initialisation of the convs keeps
the per-layer gain near one and the model learns."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "convs.0.conv"
SOURCE = ("Dauphin et al. 2017 'Language Modeling with Gated Convolutional Networks'; N(0, 0.01) "
          "init of a deep stack (Glorot & Bengio 2010: activations shrink geometrically with depth)")

V, E, C, T, L = 30, 32, 32, 40, 4


class GLUConv(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv1d(c_in, 2 * c_out, kernel_size=3, padding=1)

    def forward(self, x):
        return F.glu(self.conv(x), dim=1)


class GatedConvClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.convs = nn.Sequential(*[GLUConv(E if i == 0 else C, C) for i in range(L)])
        self.out = nn.Linear(C, 2)

    def forward(self, ids):
        h = self.convs(self.emb(ids).transpose(1, 2))
        return self.out(h.mean(-1))


def init_weights(model, fixed):
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
            else:
                nn.init.normal_(mod.weight, std=0.01)
            nn.init.zeros_(mod.bias)


def make_batch(g, polarity, bs):
    ids = torch.randint(0, V, (bs, T), generator=g)
    score = polarity[ids].sum(1)
    score = score + 0.5 * (torch.rand(bs, generator=g) - 0.5)  # break ties
    return ids, (score > 0).long()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GatedConvClassifier()
    init_weights(model, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    polarity = torch.zeros(V)
    perm = torch.randperm(V, generator=g)
    polarity[perm[:10]], polarity[perm[10:20]] = 1.0, -1.0     # balanced positive/negative words
    steps = 150
    batches = [make_batch(g, polarity, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
