"""A beginner writes a custom `SharpTanh` layer that multiplies the pre-activation by a large
"sharpness" constant (to make the hidden units behave "more like a step function") before tanh,
in a plain MLP classifier on a synthetic two-spirals-like task. With pre-activations ~k times too
large, almost every hidden unit sits at +-1 from step 0, tanh' ~ 0, and the network barely moves:
the cross-entropy stays at its starting value (silent stall, no NaN). Fixed: sharpness 1 (the
ordinary tanh), i.e. smaller pre-activations."""
import math, torch, torch.nn as nn
CAUSE = "saturation"
ORIGIN = "body.0"
SOURCE = "Known pattern: steep/scaled tanh ('sharpened' activation) saturating hidden units, LeCun 'Efficient BackProp' advice on keeping tanh pre-activations in the linear range"

class SharpTanh(nn.Module):
    def __init__(self, k):
        super().__init__(); self.k = k
    def forward(self, x):
        return torch.tanh(self.k * x)

class Block(nn.Module):
    def __init__(self, i, o, k):
        super().__init__(); self.lin = nn.Linear(i, o); self.act = SharpTanh(k)
    def forward(self, x):
        return self.act(self.lin(x))

class MLP(nn.Module):
    def __init__(self, layers, width):
        super().__init__()
        self.body = nn.Sequential(*layers); self.head = nn.Linear(width, 4)
    def forward(self, x):
        return self.head(self.body(x))

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [32, 48, 64][seed % 3]; depth = 2 + seed % 2
    k = 1.0 if fixed else [40.0, 60.0, 80.0][seed % 3]
    layers = [Block(8, width, k)] + [Block(width, width, k) for _ in range(depth - 1)]
    model = MLP(layers, width)
    steps = 150; bs = [32, 64, 48][seed % 3]
    W = torch.randn(8, 4, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, 8, generator=g)
        y = (torch.sin(2 * x) @ W).argmax(1)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=[0.1, 0.05, 0.08][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
