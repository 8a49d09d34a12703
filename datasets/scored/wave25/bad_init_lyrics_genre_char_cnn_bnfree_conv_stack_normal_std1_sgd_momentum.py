"""Lyrics genre classifier: character CNN (embedding -> stack of BN-free Conv1d+ReLU ->
global max pool -> linear), trained with SGD + momentum and cross-entropy.

Mechanism: the training script re-initialises every Conv1d / Linear with
``nn.init.normal_(m.weight)`` -- the std argument was dropped, so std = 1.0 (the
Zhang et al. char-CNN recipe says N(0, 0.05); a refactor lost the second argument).
With fan-in = channels * kernel (160-480) every conv layer multiplies the activation
scale by roughly sqrt(fan_in / 2) ~ 10-15x, geometrically with depth, from step 0.
The logits come out at 1e6-1e9, the cross-entropy is astronomically large, the first
SGD step is of the same size and the weights/loss become non-finite within a few steps
(for some seeds the first giant step instead drives every ReLU negative, and the loss
falls back to the ln(5) plateau of a constant prediction and stays there).

ORIGIN: ``convs.0`` -- the first re-initialised layer; the embedding has the correct
unit scale and the geometric growth starts at the first conv whose weights are
std-1 instead of ~sqrt(2/fan_in).

Fix: Kaiming-normal init (fan_in, ReLU gain) for the convs and Xavier for the
classifier, i.e. the scale the recipe intended; everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "convs.0"
SOURCE = ("Zhang, Zhao & LeCun 2015 char-CNN recipe (Gaussian init std 0.05) and the common "
          "'nn.init.normal_(m.weight) without std' bug reported on PyTorch forums "
          "('loss is nan from first iteration after custom weight init').")

VOCAB = 48
N_GENRES = 5


class LyricsCharCNN(nn.Module):
    def __init__(self, width, depth, k=5):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.convs = nn.ModuleList([nn.Conv1d(width, width, k, padding=k // 2) for _ in range(depth)])
        self.head = nn.Linear(width, N_GENRES)

    def forward(self, x):
        h = self.embed(x).transpose(1, 2)
        for c in self.convs:
            h = F.relu(c(h))
        h = h.max(dim=2).values
        return self.head(h)


def _make_lyrics(g, n, length, motifs):
    x = torch.randint(1, VOCAB, (n, length), generator=g)
    y = torch.randint(0, N_GENRES, (n,), generator=g)
    for i in range(n):
        m = motifs[y[i]]
        for _ in range(3):  # chorus hooks repeat
            p = int(torch.randint(0, length - m.numel(), (1,), generator=g))
            x[i, p:p + m.numel()] = m
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    width = [32, 48, 64][seed % 3]
    depth = [5, 6, 4][seed % 3]
    lr = [0.01, 0.02, 0.015][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 120
    length = 64
    motifs = [torch.randint(1, VOCAB, (4,), generator=g) for _ in range(N_GENRES)]

    model = LyricsCharCNN(width, depth)
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)  # std argument lost -> std 1.0
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            if fixed:
                nn.init.xavier_normal_(m.weight)
            else:
                nn.init.normal_(m.weight)
            nn.init.zeros_(m.bias)

    batches = [_make_lyrics(g, bs, length, motifs) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
