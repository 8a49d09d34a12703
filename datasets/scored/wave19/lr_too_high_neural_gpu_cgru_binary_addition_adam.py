"""Neural GPU (Kaiser & Sutskever, ICLR 2016) learning binary addition. The input pair of
bits at each position (LSB first) is embedded into a "mental image" s of shape
(B, C, width=length, height=4); a stack of convolutional GRUs
  u = sigmoid(U'*s + B'), r = sigmoid(U''*s + B''), s <- u*s + (1-u)*tanh(U*(r*s) + B)
is applied `length` times with shared weights, and the first row of the final image is read
out into a per-position softmax over the sum bit. Cross-entropy, Adam.

Mechanism: the reference trains with Adam at lr ~1e-3 (plus a curriculum and gradient
clipping, which this loop does not have). The config here has lr = 5e-1..8e-1 - an
exponent typo (5e-1 for 5e-4) that nobody noticed because the first losses look normal.
The same CGRU weights are applied ~length*layers times, so an Adam step of ~lr on every weight
changes the unrolled map enormously: after the first updates the update gates u and the
candidate tanh sit at 0/1 and +-1, every following step flips them, and the logits grow
without bound - the cross-entropy oscillates far above log(2) instead of learning even the
carry-free XOR part of the sum.

ORIGIN: None - the step size is too large for the whole recurrent stack.

Fix: Adam with lr = 1e-3 / 2e-3 (the intended value); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Neural GPU (Kaiser & Sutskever 2016, tensorflow/models neural_gpu); re-implementations "
          "diverging with a large Adam learning rate and no clipping")


class CGRU(nn.Module):
    def __init__(self, c, k=3):
        super().__init__()
        self.gates = nn.Conv2d(c, 2 * c, k, padding=k // 2)
        self.cand = nn.Conv2d(c, c, k, padding=k // 2)

    def forward(self, s):
        u, r = torch.sigmoid(self.gates(s)).chunk(2, 1)
        return u * s + (1 - u) * torch.tanh(self.cand(r * s))


class NeuralGPU(nn.Module):
    def __init__(self, c, layers, height=4):
        super().__init__()
        self.height = height
        self.embed = nn.Embedding(4, c)
        self.cgrus = nn.ModuleList([CGRU(c) for _ in range(layers)])
        self.readout = nn.Linear(c, 2)

    def forward(self, tokens):
        B, L = tokens.shape
        e = self.embed(tokens).transpose(1, 2)                     # B, C, L
        s = torch.zeros(B, e.shape[1], L, self.height)
        s[:, :, :, 0] = e
        for _ in range(L):
            for cg in self.cgrus:
                s = cg(s)
        return self.readout(s[:, :, :, 0].transpose(1, 2)).transpose(1, 2)   # B, 2, L


def _addition(g, B, L):
    a = torch.randint(0, 2, (B, L), generator=g)
    b = torch.randint(0, 2, (B, L), generator=g)
    a[:, -2:] = 0
    b[:, -2:] = 0                                   # room for the final carry
    out = torch.zeros(B, L, dtype=torch.long)
    carry = torch.zeros(B, dtype=torch.long)
    for i in range(L):                              # LSB first
        t = a[:, i] + b[:, i] + carry
        out[:, i] = t % 2
        carry = t // 2
    return a * 2 + b, out


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(c=24, layers=2, L=7, B=32, lr=0.5, good=2e-3, steps=90),
           dict(c=32, layers=1, L=10, B=24, lr=0.8, good=1e-3, steps=100),
           dict(c=16, layers=2, L=6, B=48, lr=0.6, good=2e-3, steps=110)][seed % 3]
    torch.manual_seed(seed)
    model = NeuralGPU(cfg["c"], cfg["layers"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["good"] if fixed else cfg["lr"])
    g = torch.Generator().manual_seed(13 + seed)
    batches = [_addition(g, cfg["B"], cfg["L"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
