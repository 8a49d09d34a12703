"""Per-pixel MODIS cloud classifier (clear / thin cirrus / thick cloud) as a deep sigmoid MLP, the classic pre-ReLU design.

Mechanism: 8 standardised MODIS band reflectances / brightness temperatures feed 6 hidden layers
of nn.Sigmoid (width 48-80 across seeds) with PyTorch's default init, trained with plain SGD. As in Glorot & Bengio (2010),
the top hidden sigmoid layer is driven towards saturation (outputs near 0) in the first updates
while the lower layers receive gradients shrunk by <= 0.25 per layer: the network stays at the
class-prior solution and the cross-entropy does not move (stall).

ORIGIN: `mlp.11`, the top (6th) hidden sigmoid, the layer that saturates first, as
observed by Glorot & Bengio).
Fix: non-saturating activation (nn.ReLU, with the He init that goes with it) in the same MLP; same SGD, lr and data.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
SOURCE = "Glorot & Bengio 2010 (top hidden sigmoid layer saturation in deep nets); MODIS cloud-mask neural network classifiers"


ORIGIN = "mlp.11"  # the 6th (top) hidden nn.Sigmoid


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    depth = 6  # same depth for all seeds so ORIGIN is one module name
    width = [64, 48, 80][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = [100, 80, 120][seed % 3]
    lr = [0.1, 0.2, 0.1][seed % 3]
    layers, d = [], 8
    for _ in range(depth):
        lin = nn.Linear(d, width)
        if fixed:  # the ReLU replacement comes with its matching (He) init
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu"); nn.init.zeros_(lin.bias)
        layers += [lin, nn.ReLU() if fixed else nn.Sigmoid()]
        d = width
    layers.append(nn.Linear(width, 3))
    model = nn.Module()
    model.mlp = nn.Sequential(*layers)
    model.forward = lambda x: model.mlp(x)
    proto = torch.randn(3, 8, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, 3, (bs,), generator=g)
        x = proto[y] * 0.8 + 0.7 * torch.randn(bs, 8, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
