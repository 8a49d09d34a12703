"""Byte-level CNN BIO tagger (Gillick-style byte-to-span / Zhang-LeCun char-CNN recipe)
initialised with the char-CNN paper's Gaussian(0, 0.02) on every conv layer, no norm, SGD.

Mechanism: the tagger is a deep stack of same-padded Conv1d+ReLU layers over byte embeddings.
With 32-64 channels and kernel 5 the fan-in is 160-320, so the He std would be ~0.08-0.11;
std 0.02 shrinks the activation scale by ~4-5x per layer from step 0.  After 7-9 layers the
features reaching the per-byte classifier are ~1e-5 of the input scale, the logits are constant,
the gradient to the lower convs vanishes and plain SGD sits on the tag-prior plateau.
ORIGIN: convs.0, the first conv whose too-small weights start the geometric shrinkage.
Fix: kaiming_normal_(nonlinearity='relu') on the convs (default zero bias), nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "convs.0"
SOURCE = ("Zhang, Zhao & LeCun 2015 char-CNN init N(0,0.02)/N(0,0.05) reused on a deeper "
          "byte-level tagger; PyTorch forum 'char CNN loss does not decrease' threads")


class ByteCNNTagger(nn.Module):
    def __init__(self, depth, width, n_tags):
        super().__init__()
        self.emb = nn.Embedding(256, width)
        self.convs = nn.ModuleList([nn.Conv1d(width, width, 5, padding=2) for _ in range(depth)])
        self.act = nn.ReLU()
        self.out = nn.Conv1d(width, n_tags, 1)

    def forward(self, x):
        h = self.emb(x).transpose(1, 2)
        for c in self.convs:
            h = self.act(c(h))
        return self.out(h)  # (B, tags, T)


def _make_data(g, n, T):
    # small "alphabet": lowercase, uppercase, digits, space; tags from local byte patterns
    alph = torch.tensor([32] * 6 + list(range(97, 107)) + list(range(65, 71)) + list(range(48, 52)))
    idx = torch.randint(0, len(alph), (n, T), generator=g)
    x = alph[idx]
    up = (x >= 65) & (x <= 90)
    dig = (x >= 48) & (x <= 57)
    prev_sp = torch.cat([torch.ones(n, 1, dtype=torch.bool), x[:, :-1] == 32], 1)
    y = torch.zeros(n, T, dtype=torch.long)       # O
    y[up & prev_sp] = 1                            # B-ENT
    y[up & ~prev_sp] = 2                           # I-ENT
    y[dig & prev_sp] = 3                           # B-NUM
    y[dig & ~prev_sp] = 4                          # I-NUM
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    depth, width, lr, bs = [(8, 32, 0.03, 16), (9, 40, 0.02, 12), (7, 32, 0.03, 20)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = ByteCNNTagger(depth, width, 5)
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.02)
            nn.init.zeros_(m.bias)
    steps = 60
    batches = [_make_data(g, bs, 32) for _ in range(steps)]
    # usual trick: start the output bias at the log tag prior (estimated on the first batch)
    prior = torch.bincount(batches[0][1].flatten(), minlength=5).float() + 1.0
    with torch.no_grad():
        model.out.bias.copy_((prior / prior.sum()).log())
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(out, y):
        return F.cross_entropy(out, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
