"""A deep MLP with sigmoid activations between every layer, trained with plain SGD: each sigmoid's
derivative is at most 0.25 and its outputs are all positive, so the gradient reaching the first
layers shrinks geometrically with depth and the loss sits near its starting value (Glorot and
Bengio, 2010). No value saturates in the tails; the gradients vanish through the stack. ORIGIN is
the first sigmoid, the first layer of the stack whose derivative throttles the gradient. Fixed:
ReLU activations, nothing else changed."""
import torch
from torch import nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = "Glorot & Bengio 2010: deep sigmoid networks stall under SGD"


class Net(nn.Module):
    def __init__(self, depth: int, width: int, act: type[nn.Module]) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Linear(16, width), act()]
        for _ in range(depth - 2):
            layers += [nn.Linear(width, width), act()]
        layers.append(nn.Linear(width, 4))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    depth, width, lr = ((6, 32, 0.1), (7, 48, 0.1), (8, 48, 0.2))[seed % 3]
    model = Net(depth, width, nn.ReLU if fixed else nn.Sigmoid)
    w = torch.randn(16, 4, generator=g)
    batches = []
    for _ in range(300):
        x = torch.randn(64, 16, generator=g)
        batches.append((x, (x @ w).argmax(1)))
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9),
            "loss_fn": nn.functional.cross_entropy, "batches": batches, "steps": 300}
