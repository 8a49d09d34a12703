"""Classic LeNet-5 with nn.Sigmoid activations and average pooling (as in the d2l.ai
"LeNet" chapter), trained with SGD (momentum 0.9) on small glyph images.

Mechanism: Glorot & Bengio (2010) - with sigmoid units and standard init the top
hidden layer is driven into saturation near 0 early on: its outputs
barely depend on the input, dsigmoid/dz is <= 0.25 per layer and shrinks further
through the five sigmoid layers, so the gradient reaching the convolutions is
vanishingly small and SGD sits on the ln(C) plateau for the whole run.

ORIGIN: `f7`, the sigmoid after the last hidden fully connected layer (top hidden
layer), where the saturation that stops the gradient is observed first.

Fix: non-saturating activations (nn.ReLU in place of every nn.Sigmoid); the
optimiser, lr, init and data are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "f7"
SOURCE = ("Glorot & Bengio, 'Understanding the difficulty of training deep feedforward "
          "neural networks' (2010), top-layer sigmoid saturation; d2l.ai LeNet with "
          "sigmoid training slowly.")


def lenet(act, c1, c2, n_cls):
    return nn.Sequential(
        nn.Conv2d(1, c1, 5, padding=2), act(), nn.AvgPool2d(2),
        nn.Conv2d(c1, c2, 5), act(), nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Linear(c2 * 2 * 2, 48), act(),
        nn.Linear(48, 32), act(),
        nn.Linear(32, n_cls),
    )


class LeNet5(nn.Module):
    def __init__(self, act, c1, c2, n_cls):
        super().__init__()
        seq = lenet(act, c1, c2, n_cls)
        names = ["c1", "a1", "s2", "c3", "a3", "s4", "flat", "f5", "a5", "f6", "f7", "out"]
        for n, m in zip(names, seq):
            self.add_module(n, m)

    def forward(self, x):
        for m in self.children():
            x = m(x)
        return x


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(c1=6, c2=16, bs=32, lr=0.1, steps=80),
           dict(c1=6, c2=16, bs=48, lr=0.1, steps=90),
           dict(c1=8, c2=16, bs=32, lr=0.1, steps=80)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11 + seed)
    n_cls = 6
    model = LeNet5(nn.ReLU if fixed else nn.Sigmoid, cfg["c1"], cfg["c2"], n_cls)
    glyphs = (torch.rand(n_cls, 1, 16, 16, generator=g) > 0.6).float()
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        x = glyphs[y] + 0.3 * torch.randn(cfg["bs"], 1, 16, 16, generator=g)
        batches.append(((x - 0.4) / 0.55, y))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
