"""Hot-strip-mill coil property model: MLP under fp16 autocast with a working GradScaler (healthy).

What happens: the yield strength (standardised) of each coil is predicted from
chemistry (C, Mn, Si, Nb, Ti, ...) and mill settings (finishing/coiling temperature,
reductions, cooling rate). The run uses ``torch.autocast(float16)`` with a
``GradScaler`` and a *summed* squared error over the batch (B = 128-256), so the
loss values are in the hundreds and, at the scaler's initial scale of 2**16, the
scaled fp16 gradients overflow to inf in the first steps. The scaler does what it
is designed to do: it skips those optimizer steps (the parameters do not change at
all - exactly-zero updates) and halves its scale until the gradients fit, after
which training proceeds normally; later occasional overflows are skipped the same
way. The loss itself is always finite and falls steadily.

A naive monitor may flag: inf gradients, several steps with exactly zero parameter
change, a large summed loss. None of it is a fault.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP docs/recipe: GradScaler skips steps with inf/NaN gradients and backs off "
          "the scale (init_scale=65536); data-driven mechanical-property prediction for hot-rolled "
          "steel (e.g. Xu et al. 2021, 'Mechanical property prediction of strip steel').")


class CoilPropertyMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SiLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(-1)


def _coils(g, n, W):
    x = torch.randn(n, 14, generator=g)
    # solid solution + precipitation + grain refinement (coiling temp, cooling rate)
    y = (x[:, :6] @ W + 0.6 * torch.relu(x[:, 3]) * (x[:, 10] < 0) - 0.5 * x[:, 9]
         + 0.3 * x[:, 11] + 0.2 * torch.tanh(x[:, 12] * x[:, 13]))
    y = y + 0.15 * torch.randn(n, generator=g)
    return x, y


def sum_sq_error(pred, y):
    return ((pred.float() - y) ** 2).sum()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(700 + seed)
    width = [64, 128, 96][seed % 3]
    depth = [3, 2, 3][seed % 3]
    bs = [128, 256, 192][seed % 3]
    lr = [1e-3, 5e-4, 8e-4][seed % 3]
    steps = 120
    W = 0.4 * torch.randn(6, generator=g)
    _, yr = _coils(torch.Generator().manual_seed(5), 8192, W)
    mu, sd = yr.mean(), yr.std()
    model = CoilPropertyMLP(14, width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    batches = []
    for _ in range(steps):
        x, y = _coils(g, bs, W)
        batches.append((x, (y - mu) / sd))
    return dict(model=model, optimizer=opt, loss_fn=sum_sq_error, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
