"""Hamiltonian neural network for a Duffing oscillator (H = p^2/2 + q^2/2 + q^4/4) with Jagtap-style
adaptive activations tanh(n * a * z), scale factor n = 20, trainable slope a. The method prescribes
n * a = 1 at initialisation; here a starts at 1.0, so every hidden pre-activation is multiplied by 20
and the tanh units sit in their flat tails. The model's output is dH/dx (torch.autograd.grad with
create_graph=True inside forward), which passes entirely through tanh' ~ 0, so the loss stays at the
'predict zero' level of step 0 (output layer zero-initialised) while the fixed run learns the flow.
fixed=True: a is initialised to 1/n (n * a = 1), as in the reference; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Jagtap, Kawaguchi & Karniadakis 2020 'Adaptive activation functions accelerate convergence in "
          "deep and physics-informed neural networks' (tanh(n*a*x), n*a = 1 at init) used in a "
          "Hamiltonian neural network (Greydanus et al. 2019, dH/dx via autograd in forward)")

N_SCALE = 20.0


class AdaptiveTanh(nn.Module):
    def __init__(self, n, a0):
        super().__init__()
        self.n = n
        self.a = nn.Parameter(torch.tensor(float(a0)))

    def forward(self, z):
        return torch.tanh(self.n * self.a * z)


class AdaptiveHNN(nn.Module):
    def __init__(self, width, depth, a0):
        super().__init__()
        layers, d = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d, width), AdaptiveTanh(N_SCALE, a0)]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)
        for mod in self.net:
            if isinstance(mod, nn.Linear):
                nn.init.xavier_normal_(mod.weight)
                nn.init.zeros_(mod.bias)
        nn.init.zeros_(self.net[-1].weight)  # flat initial Hamiltonian

    def forward(self, x):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            H = self.net(x)
            dH = torch.autograd.grad(H.sum(), x, create_graph=True)[0]
        return torch.stack([dH[:, 1], -dH[:, 0]], dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    a0 = 1.0 / N_SCALE if fixed else 1.0
    model = AdaptiveHNN(width=64, depth=3, a0=a0)
    steps, n = 300, 128
    batches = []
    for _ in range(steps):
        q = 2.4 * torch.rand(n, generator=g) - 1.2
        p = 3.0 * torch.rand(n, generator=g) - 1.5
        dq, dp = p, -q - q ** 3
        y = torch.stack([dq, dp], 1) + 0.02 * torch.randn(n, 2, generator=g)
        batches.append((torch.stack([q, p], 1), y))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
