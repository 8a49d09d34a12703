"""dead_relu: character-level CNN + highway text classifier whose conv ReLUs are born dead.

Mechanism: characters -> embedding -> Conv1d filters + ReLU -> max-over-time -> 2 highway
layers -> linear classifier (the Kim et al. 2016 char-CNN/highway front end used as a
classifier).  Highway papers recommend initialising the *transform-gate* bias to -2 so
the layers start by carrying their input.  The user's init loop did it for every bias in
the model (`for n, p in named_parameters(): if n.endswith("bias"): p.data.fill_(-2.0)`),
including the char-convolution.  With the char embeddings initialised U(-0.05, 0.05) (as in
Kim et al.) and default conv weights the conv pre-activations are ~N(-2, 0.02^2): no filter
ever fires on any window, max-over-time returns 0 for almost every (filter, document), the highway layers
carry zeros, and no gradient reaches the convolution or the embeddings.  The classifier
can only learn its bias: the loss sits at ln(n_classes).

ORIGIN: "conv_act" (the ReLU after the char convolution, the first layer whose units are dead).
Fix: apply the -2 fill only to the highway transform-gate biases (the others keep their
default init) - the only change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "conv_act"
SOURCE = ("Srivastava et al. 2015 'Highway Networks' (transform gate bias -1..-3) and Kim et al. "
          "2016 'Character-Aware Neural Language Models' (char CNN + highway, U(-0.05,0.05) "
          "init); known pattern: a bias-fill loop meant for the gates applied to every bias")


class Highway(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.transform = nn.Linear(d, d)
        self.gate = nn.Linear(d, d)

    def forward(self, x):
        t = torch.sigmoid(self.gate(x))
        return t * F.relu(self.transform(x)) + (1 - t) * x


class CharHighwayClassifier(nn.Module):
    def __init__(self, n_chars, emb, filters, width, n_cls):
        super().__init__()
        self.embedding = nn.Embedding(n_chars, emb)
        nn.init.uniform_(self.embedding.weight, -0.05, 0.05)      # as in Kim et al. 2016
        self.conv = nn.Conv1d(emb, filters, width)
        self.conv_act = nn.ReLU()
        self.highway = nn.Sequential(Highway(filters), Highway(filters))
        self.classifier = nn.Linear(filters, n_cls)

    def forward(self, chars):
        x = self.conv_act(self.conv(self.embedding(chars).transpose(1, 2)))
        x = x.max(-1).values
        return self.classifier(self.highway(x))


def init_biases(model, fixed):
    for name, p in model.named_parameters():
        if not name.endswith("bias"):
            continue
        if fixed and not name.endswith("gate.bias"):
            continue
        p.data.fill_(-2.0)


def _docs(g, n, T, n_chars, n_cls):
    # each class has a few signature character trigrams planted in random text
    sig = torch.randint(1, n_chars, (n_cls, 4, 3), generator=g)
    x = torch.randint(1, n_chars, (n, T), generator=g)
    y = torch.arange(n) % n_cls
    y = y[torch.randperm(n, generator=g)]
    for i in range(n):
        for _ in range(3):
            k = int(torch.randint(0, 4, (1,), generator=g))
            p = int(torch.randint(0, T - 3, (1,), generator=g))
            x[i, p:p + 3] = sig[y[i], k]
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(n_chars=40, emb=16, filters=64, width=3, T=48, cls=4, bs=32, steps=100, lr=2e-3),
           dict(n_chars=60, emb=24, filters=96, width=4, T=40, cls=5, bs=24, steps=120, lr=1e-3),
           dict(n_chars=32, emb=16, filters=48, width=3, T=56, cls=3, bs=40, steps=90, lr=3e-3)][seed % 3]
    model = CharHighwayClassifier(cfg["n_chars"], cfg["emb"], cfg["filters"], cfg["width"], cfg["cls"])
    init_biases(model, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    bs = cfg["bs"]
    x, y = _docs(g, cfg["steps"] * bs, cfg["T"], cfg["n_chars"], cfg["cls"])
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=cfg["steps"])
