"""SpliceAI-style dilated residual 1D CNN for per-nucleotide splice-site labelling
(none / acceptor / donor) on one-hot DNA, trained with plain SGD and per-position
cross-entropy.

Mechanism (bad_init): a from-scratch re-implementation initialises every Conv1d with
`nn.init.normal_(w, 0.0, 1.0)` (the torch default std of 1) instead of a fan-in scaled
init, and - as in many light-weight SpliceAI ports - drops BatchNorm from the residual
units. Each dilated conv has fan-in C*k (hundreds), so every residual unit multiplies the
activation scale by roughly sqrt(C*k/2) >> 1; the scale grows geometrically with the
number of residual units from step 0, logits are in the thousands or more, the first SGD
step is enormous and the loss goes non-finite (or sits at a huge value).

ORIGIN: `blocks.0.conv1`, the first dilated conv of the first residual unit. The stem is a
1x1 conv on one-hot input (each output is one weight, so std 1, no amplification yet);
the geometric growth starts at the first conv whose fan-in is C*k.

Fix: kaiming-normal (fan_in, relu) init for the convs, zero biases; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "blocks.0.conv1"
SOURCE = ("SpliceAI (Jaganathan et al., Cell 2019) residual-unit architecture; pattern of "
          "re-implementations that init conv weights with nn.init.normal_ (std=1) and no "
          "BatchNorm, cf. PyTorch forum threads 'loss is nan from the first iteration with "
          "custom weight init normal_(0, 1)'")


class ResUnit(nn.Module):
    def __init__(self, c, k, dil):
        super().__init__()
        pad = dil * (k - 1) // 2
        self.conv1 = nn.Conv1d(c, c, k, dilation=dil, padding=pad)
        self.conv2 = nn.Conv1d(c, c, k, dilation=dil, padding=pad)

    def forward(self, x):
        h = self.conv1(F.relu(x))
        h = self.conv2(F.relu(h))
        return x + h


class SpliceNet(nn.Module):
    def __init__(self, c, k, dils):
        super().__init__()
        self.stem = nn.Conv1d(4, c, 1)
        self.blocks = nn.ModuleList([ResUnit(c, k, d) for d in dils])
        self.skip = nn.Conv1d(c, c, 1)
        self.head = nn.Conv1d(c, 3, 1)

    def forward(self, x):
        h = self.stem(x)
        s = self.skip(h)
        for b in self.blocks:
            h = b(h)
        return self.head(h + s)  # (B, 3, L)


def _make_batch(g, bs, L):
    idx = torch.randint(0, 4, (bs, L), generator=g)
    lab = torch.zeros(bs, L, dtype=torch.long)
    acc = torch.tensor([1, 0, 2, 2])          # "CAGG" (AG acceptor dinucleotide)
    don = torch.tensor([2, 3, 0, 0, 2, 3])    # "GTAAGT" donor consensus
    for i in range(bs):
        for _ in range(2):
            p = int(torch.randint(4, L - 10, (1,), generator=g))
            if torch.rand(1, generator=g) < 0.5:
                idx[i, p:p + 4] = acc
                lab[i, p + 2] = 1
            else:
                idx[i, p:p + 6] = don
                lab[i, p] = 2
    x = F.one_hot(idx, 4).float().transpose(1, 2).contiguous()
    return x, lab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    c = [24, 32, 32][seed % 3]
    k = [5, 7, 9][seed % 3]
    n_units = 3 + seed % 3
    dils = [1, 2, 4, 1, 2, 4][:n_units]
    bs = [16, 24, 32][seed % 3]
    lr = [0.05, 0.08, 0.03][seed % 3]
    L = 80
    steps = 120

    model = SpliceNet(c, k, dils)
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    wts = torch.tensor([1.0, 5.0, 5.0])

    def loss_fn(out, y):
        return F.cross_entropy(out, y, weight=wts)

    batches = [_make_batch(g, bs, L) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
