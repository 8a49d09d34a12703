"""Maxout MLP (Goodfellow et al. 2013) written by hand, since PyTorch has no Maxout layer.
Each Maxout layer stores its k linear pieces as nn.Parameter(torch.randn(k, in, out)), i.e. unit-variance
weights regardless of fan-in. Every layer multiplies the activation scale by roughly sqrt(fan_in) (and the
max over pieces adds a positive shift), so logits are ~1e4 at step 0 after only 4 layers; the first SGD+momentum step then
blows the weights up and the loss goes inf/NaN within a few steps.
fixed=True: the same pieces are initialised with std sqrt(1/fan_in) (Glorot/LeCun-style), nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Hand-written maxout layers in PyTorch ports of pylearn2 maxout (Goodfellow et al. 2013) that "
          "create the pieces with nn.Parameter(torch.randn(...)); forum reports 'maxout network loss is nan "
          "from the first iterations' fixed by scaling the init by 1/sqrt(fan_in)")


class Maxout(nn.Module):
    def __init__(self, d_in, d_out, pieces, fixed):
        super().__init__()
        std = math.sqrt(1.0 / d_in) if fixed else 1.0
        self.weight = nn.Parameter(torch.randn(pieces, d_in, d_out) * std)
        self.bias = nn.Parameter(torch.zeros(pieces, 1, d_out))

    def forward(self, x):
        # (pieces, B, out) -> max over pieces
        z = torch.matmul(x.unsqueeze(0), self.weight) + self.bias
        return z.max(dim=0).values


class MaxoutNet(nn.Module):
    def __init__(self, d_in, hidden, n_cls, depth, pieces, fixed):
        super().__init__()
        dims = [d_in] + [hidden] * depth
        self.layers = nn.ModuleList([Maxout(dims[i], dims[i + 1], pieces, fixed) for i in range(depth)])
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(hidden, n_cls)

    def forward(self, x):
        for layer in self.layers:
            x = self.drop(layer(x))
        return self.head(x)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in, n_cls, steps, bs = 64, 10, 150, 64
    # gaussian-mixture "digits": 10 class centres in 64-d, standardised features
    centres = torch.randn(n_cls, d_in, generator=g) * 0.5
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = centres[y] + torch.randn(bs, d_in, generator=g)
        x = (x - x.mean(0)) / (x.std(0) + 1e-5)
        batches.append((x, y))
    model = MaxoutNet(d_in, 128, n_cls, depth=4, pieces=3, fixed=fixed)
    lr = 0.02 + 0.01 * (seed % 3)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
