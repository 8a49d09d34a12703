"""Early-exit (BranchyNet-style) 1-D CNN that regresses a bearing-wear index from
vibration windows, with a side exit after every second conv block and a summed,
weighted Huber loss over all exits.

Mechanism: the trunk is a stack of plain Conv1d+ReLU blocks without any normalisation,
and its parameters were created "by hand" as ``nn.Parameter(torch.randn(...))`` (std 1)
in a port of a NumPy prototype, instead of PyTorch's default/kaiming scaling.  With a
fan-in of channels*3 each block multiplies the activation scale by about
sqrt(fan_in/2) (~5-8), so the scale grows geometrically with depth from step 0: the
deepest exit predicts values ~1e4-1e7 on step 0.  The Huber loss is still finite on that
step, but the gradients are of the same geometric size and the first SGD update throws
the weights so far that the next forward overflows float32 -> inf/NaN loss.

ORIGIN: ``trunk.0`` -- the first conv block; the scale blow-up starts at the first
layer's output and compounds block by block (every block has the same init bug, the
first is where the growth begins).

Fix: kaiming-normal (fan_in, ReLU gain) initialisation for every conv and exit weight,
zero biases.  Same architecture, data, loss, optimiser and steps.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "trunk.0"
SOURCE = ("BranchyNet (Teerapittayanon et al. 2016) style early exits on a norm-free conv "
          "trunk; known pattern: randn-initialised weights in a NumPy->PyTorch port, activations "
          "exploding geometrically with depth (He et al. 2015, 'Delving deep into rectifiers')")


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, 3, padding=1)

    def forward(self, x):
        return F.relu(self.conv(x))


class EarlyExitCNN(nn.Module):
    def __init__(self, cin, ch, depth, exit_every=2):
        super().__init__()
        self.trunk = nn.ModuleList([ConvBlock(cin if i == 0 else ch, ch) for i in range(depth)])
        self.exit_at = [i for i in range(depth) if (i + 1) % exit_every == 0 or i == depth - 1]
        self.exits = nn.ModuleList([nn.Linear(ch, 1) for _ in self.exit_at])

    def forward(self, x):
        outs, k = [], 0
        for i, blk in enumerate(self.trunk):
            x = blk(x)
            if i in self.exit_at:
                outs.append(self.exits[k](x.mean(dim=2)).squeeze(1))
                k += 1
        return torch.stack(outs, dim=1)          # (B, n_exits)


def _init(model, fixed):
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            with torch.no_grad():
                if fixed:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                    m.bias.zero_()
                else:
                    m.weight.copy_(torch.randn_like(m.weight))   # NumPy port: np.random.randn
                    m.bias.copy_(torch.randn_like(m.bias))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(2000 + seed)
    ch = [24, 32, 16][seed % 3]
    depth = [8, 6, 10][seed % 3]
    lr = [4e-3, 6e-3, 3e-3][seed % 3]
    bs = [32, 48, 24][seed % 3]
    steps = [150, 200, 160][seed % 3]
    L, cin = 64, 3

    t = torch.arange(L).float() / L
    batches = []
    for _ in range(steps):
        wear = torch.rand(bs, generator=g)
        f0 = 3.0 + 6.0 * wear
        phase = 2 * math.pi * torch.rand(bs, cin, 1, generator=g)
        sig = torch.sin(2 * math.pi * f0.view(bs, 1, 1) * t.view(1, 1, L) + phase)
        sig = sig * (0.5 + wear.view(bs, 1, 1)) + 0.3 * torch.randn(bs, cin, L, generator=g)
        y = (wear - 0.5) / 0.29                   # standardised wear index
        batches.append((sig, y))

    torch.manual_seed(seed)
    model = EarlyExitCNN(cin, ch, depth)
    _init(model, fixed)
    n_exit = len(model.exit_at)
    w = torch.linspace(0.5, 1.0, n_exit)          # later exits weigh more

    def loss_fn(out, y):
        per_exit = F.smooth_l1_loss(out, y.unsqueeze(1).expand_as(out), reduction="none").mean(0)
        return (w.to(per_exit.dtype) * per_exit).sum()

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
