"""Census record linkage: deep MLP scoring candidate pairs from Fellegi-Sunter comparison vectors.

Domain: after blocking (same county, birth year +-2), each candidate pair of records from two
censuses is described by a comparison vector: Jaro-Winkler similarities of given name, surname,
father's and mother's given names, birthplace agreement, |birth-year difference|, sex and race
agreement, household-relationship agreement, etc. A deep ReLU MLP replaces the Fellegi-Sunter
match weights and is trained on clerically reviewed pairs with BCE-with-logits and SGD.

Mechanism: the practitioner re-initialises every Linear with nn.init.normal_(m.weight) (mean 0,
std 1 -- the function's default) and zero biases, intending "a normal init". For a ReLU layer
of width w that multiplies the activation scale by about sqrt(w / 2) ~ 6-9 per layer, so
with 6-8 hidden layers the logits are ~1e5-1e7 at step 0. The BCE-with-logits loss is already
huge on the first batch and its gradients, scaled by the same product of layer gains, make the
first SGD step overshoot by orders of magnitude; within a few steps the weights overflow and the
loss becomes inf / NaN.

ORIGIN: "net.0" -- the first Linear: the geometric growth starts at the first mis-initialised
layer and compounds through every later one.

Fix: Kaiming-uniform / PyTorch default-style initialisation (kaiming_normal_ with
nonlinearity='relu') instead of std=1; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Fellegi & Sunter 1969 comparison vectors; ML census linking (e.g. Feigenbaum 2016, "
          "Abramitzky et al. 2021 automated linking methods); nn.init.normal_ default std=1 "
          "misused as a weight init (common PyTorch forum pattern)")


class PairScorer(nn.Module):
    def __init__(self, d_in, width, depth, fixed):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)
        for m in self.net:
            if isinstance(m, nn.Linear):
                if fixed:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def _pairs(g, n):
    match = (torch.rand(n, generator=g) < 0.35).float()
    m = match[:, None]
    # string similarities (Jaro-Winkler): high for matches, spread for non-matches
    jw = m * (0.85 + 0.15 * torch.rand(n, 4, generator=g) ** 2) + \
        (1 - m) * (0.4 + 0.55 * torch.rand(n, 4, generator=g))
    ocr = torch.rand(n, 4, generator=g) < 0.1                       # transcription errors
    jw = torch.where(ocr, jw * (0.6 + 0.3 * torch.rand(n, 4, generator=g)), jw)
    yr_diff = (m * torch.randint(0, 2, (n, 1), generator=g).float()
               + (1 - m) * torch.randint(0, 3, (n, 1), generator=g).float()) / 2.0
    agree_p = m * 0.95 + (1 - m) * 0.5
    agree = (torch.rand(n, 5, generator=g) < agree_p).float()
    x = torch.cat([jw, yr_diff, agree], -1)
    return x, match


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [96, 128, 80][seed % 3]
    depth = [6, 7, 8][seed % 3]
    batch = [128, 96, 64][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    steps = 100
    batches = [_pairs(g, batch) for _ in range(steps)]
    model = PairScorer(10, width, depth, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
