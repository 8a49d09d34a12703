"""Unsupervised deep hashing (two augmented views of each item must get the same binary
code, different items near-orthogonal codes): MLP encoder on pre-extracted image features,
a hash layer b = tanh(beta * Wh), and a contrastive loss on code agreement: cross-entropy
over the scaled code inner products s * (b_a . b_b) / K, the other view of the same item
being the positive (as in contrastive hashing, e.g. CIBHash), SGD with Nesterov momentum.

Mechanism: HashNet-style continuation should start the relaxation at beta = 1 and raise it
during training until tanh approaches sign().  Here the *final* beta (20-40) is used from
step 0.  The hash pre-activations are small at init (~0.05), but beta * x is already ~1-3
for a typical bit (tanh half-saturated) and every gradient through tanh(beta * x) is
multiplied by beta.  The first Nesterov-momentum steps therefore move beta * x by tens:
within 2-5 steps it is ~10-90 for the typical bit, tanh is pinned at +-1 (1 - tanh^2 == 0
in float32), most items share the same code pattern, and no gradient reaches the hash layer
or the encoder again.  The loss jumps to about log(batch) and stays there (no inf/NaN).

ORIGIN: ``hash`` - the hash Linear whose output goes through the over-scaled tanh; the
saturation is applied right there (the encoder below is healthy but receives no gradient).

Fix: start the continuation at beta = 1 (kept at 1 over this short run).  Same model,
optimiser, data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "hash"
SOURCE = ("HashNet (Cao et al. 2017) continuation tanh(beta*x); reports of unsupervised "
          "hashing codes frozen at init / loss flat when beta is set to its final value from "
          "the first iteration")


class HashNet(nn.Module):
    def __init__(self, d_in, hid, bits, beta):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU())
        self.hash = nn.Linear(hid, bits)
        self.beta = beta

    def forward(self, xa, xb):
        ba = torch.tanh(self.beta * self.hash(self.encoder(xa)))
        bb = torch.tanh(self.beta * self.hash(self.encoder(xb)))
        return ba, bb


def code_agreement_ce(out, target):
    ba, bb = out
    k = ba.shape[1]
    logits = 8.0 * ba @ bb.T / k
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hid = [128, 96, 160][seed % 3]
    bits = [32, 24, 48][seed % 3]
    bs = [48, 64, 40][seed % 3]
    lr = [0.1, 0.05, 0.08][seed % 3]
    beta = 1.0 if fixed else [30.0, 20.0, 40.0][seed % 3]
    steps = 120
    d_in, n_lat = 64, 10
    basis = torch.randn(n_lat, d_in, generator=g) / n_lat ** 0.5
    batches = []
    for _ in range(steps):
        lat = torch.randn(bs, n_lat, generator=g)
        feat = F.relu(lat @ basis + 0.3)                 # "CNN features": non-negative
        def view():
            return feat * (0.8 + 0.4 * torch.rand(bs, 1, generator=g)) \
                * (torch.rand(bs, d_in, generator=g) > 0.15).float() \
                + 0.05 * torch.randn(bs, d_in, generator=g)
        batches.append(((view(), view()), torch.arange(bs)))
    model = HashNet(d_in, hid, bits, beta)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=code_agreement_ce, batches=batches, steps=steps)
