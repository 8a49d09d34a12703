"""Hard-parameter-sharing multi-task network in the Caruana (1997) style, made deeper: a shared
trunk of 6-8 Linear+Sigmoid layers feeding a classification head (cross-entropy) and a regression
head (MSE), combined with a fixed task weight of 0.5.

Mechanism: sigmoid units have slope <= 0.25 and a non-zero (0.5) mean output.  Stacked 6-8 deep,
every layer multiplies both the input-dependent part of the forward signal and the backward
gradient by ~0.25 * |W|: the sample-to-sample spread of the trunk output falls from ~0.25 after the
first sigmoid to ~1e-3-1e-4 at the top, while each unit sits at the same constant value for every
input.  The heads only see a constant vector, so they can fit nothing but the (balanced / zero-mean)
label marginals, and the gradient that reaches the lower trunk is ~0.25^depth of what the heads
receive -- the vanishing-gradient plateau of deep sigmoid nets (Glorot & Bengio 2010).  SGD with
momentum stays at ~ ln(4) + 0.5 * Var(y_reg).

ORIGIN: "trunk.1" -- the first Sigmoid of the trunk: the shrinkage starts at the first saturating
non-linearity and is compounded by every following one.

Fix: use a non-saturating activation (ReLU) in the shared trunk; same widths, He init, data, task
weight and optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "trunk.1"
SOURCE = ("Glorot & Bengio 2010 'Understanding the difficulty of training deep feedforward neural "
          "networks' (deep sigmoid nets plateau, gradients vanish through the sigmoid layers); "
          "Caruana 1997 'Multitask Learning' shared sigmoid trunk, re-implemented deeper")


class MTLNet(nn.Module):
    def __init__(self, d_in, width, depth, n_cls, fixed):
        super().__init__()
        layers = []
        d = d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU() if fixed else nn.Sigmoid()]
            d = width
        self.trunk = nn.Sequential(*layers)
        self.cls_head = nn.Linear(width, n_cls)
        self.reg_head = nn.Linear(width, 1)
        for m in self.trunk:                # He init applied to every trunk Linear
            if isinstance(m, nn.Linear):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        h = self.trunk(x)
        return {"logits": self.cls_head(h), "reg": self.reg_head(h).squeeze(-1)}


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [6, 7, 8][seed % 3]
    width = [64, 96, 128][seed % 3]
    bs = [64, 128, 96][seed % 3]
    lr = [0.02, 0.015, 0.025][seed % 3]
    w_reg = 0.5
    d_in, n_cls, steps = 20, 4, 200
    W1 = torch.randn(d_in, 4, generator=g)
    w2 = torch.randn(d_in, generator=g) / d_in ** 0.5
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d_in, generator=g)
        y_cls = (x @ W1).argmax(1)
        y_reg = torch.tanh(x @ w2) * 1.5 + 0.1 * torch.randn(bs, generator=g)
        batches.append((x, (y_cls, y_reg)))
    torch.manual_seed(seed)
    model = MTLNet(d_in, width, depth, n_cls, fixed)

    def loss_fn(out, y):
        return F.cross_entropy(out["logits"], y[0]) + w_reg * F.mse_loss(out["reg"], y[1])

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
