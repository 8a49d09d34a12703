"""Fourier-feature PINN (Wang, Wang & Perdikaris 2021) for the multi-scale 1-D Poisson problem
u'' = f, u = sin(2 pi x) + 0.1 sin(50 pi x), trained under float16 autocast to save time. The
residual u'' is built inside forward with two torch.autograd.grad(create_graph=True) calls. The
random Fourier embedding sin/cos(2 pi x B) with B ~ N(0, sigma^2), sigma = 25, multiplies the second
derivative by (2 pi b)^2 ~ 1e4-1e5; the float16 backward of the embedding (x @ B under autocast) that
assembles u'' passes 65504, so the residual and the loss are inf at the first step.
fixed=True: autocast in bfloat16 instead of float16 (same exponent range as float32), nothing else.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "embed"
SOURCE = ("Wang, Wang & Perdikaris 2021 'On the eigenvector bias of Fourier feature networks' (multi-scale "
          "Poisson, sigma in 1..50 Fourier features); mixed-precision PINN overflow reports: second derivatives "
          "of high-frequency features exceed the float16 range")


class FourierEmbedding(nn.Module):
    def __init__(self, m, sigma):
        super().__init__()
        self.register_buffer("B", torch.randn(1, m) * sigma)

    def forward(self, x):
        z = 2 * math.pi * (x @ self.B)
        return torch.cat([torch.sin(z), torch.cos(z)], dim=-1)


class FourierPINN(nn.Module):
    def __init__(self, m=128, width=64, sigma=25.0):
        super().__init__()
        self.embed = FourierEmbedding(m, sigma)
        self.mlp = nn.Sequential(nn.Linear(2 * m, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
                                 nn.Linear(width, 1))
        for mod in self.mlp:
            if isinstance(mod, nn.Linear):
                nn.init.xavier_normal_(mod.weight)
                nn.init.zeros_(mod.bias)

    def u(self, x):
        return self.mlp(self.embed(x))

    def forward(self, x_int, x_bc):
        with torch.enable_grad():
            x = x_int.detach().requires_grad_(True)
            u = self.u(x)
            u_x = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
            u_xx = torch.autograd.grad(u_x.sum(), x, create_graph=True)[0]
        res = u_xx.squeeze(-1).float()
        bc = self.u(x_bc).squeeze(-1).float()
        return torch.cat([res, bc])


def _f(x):
    return -(2 * math.pi) ** 2 * torch.sin(2 * math.pi * x) - 0.1 * (50 * math.pi) ** 2 * torch.sin(50 * math.pi * x)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = FourierPINN()
    steps, n = 200, 128
    x_bc = torch.tensor([[0.0], [1.0]])
    batches = []
    for _ in range(steps):
        x = torch.rand(n, 1, generator=g)
        # residual targets are scaled by 1/1000 in the loss weights below; boundary values are 0
        y = torch.cat([_f(x).squeeze(-1), torch.zeros(2)])
        batches.append(((x, x_bc), y))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    n_res = n

    def loss_fn(out, y):
        # Wang et al. weight the residual term down so that both terms have comparable scale
        res_loss = torch.mean(((out[:n_res] - y[:n_res]) / 1000.0) ** 2)
        bc_loss = torch.mean((out[n_res:] - y[n_res:]) ** 2)
        return res_loss + 10.0 * bc_loss

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
