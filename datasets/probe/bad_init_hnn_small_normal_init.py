"""Hamiltonian neural network (Greydanus et al. 2019) whose deep tanh H-network was
initialised with nn.init.normal_(w, 0, 0.01) (the old Caffe/AlexNet 'gaussian 0.01'
recipe) instead of an orthogonal / Xavier init.

Mechanism. The HNN learns a scalar H(q, p) and predicts the dynamics as the
symplectic gradient (dH/dp, -dH/dq), obtained with autograd (create_graph=True); the
loss is the MSE to the observed time derivatives of a set of nonlinear oscillators.
The prediction is therefore the input-gradient of H, i.e. the product of all layer
Jacobians W_L D_L ... W_1.  With std 0.01 each tanh layer (tanh'~1 at these tiny
pre-activations) scales signals by ~sqrt(width)*0.01 ~ 0.06-0.08, so activations
shrink geometrically with depth from step 0 and the predicted vector field is
~1e-11..1e-12.  The parameter gradients are products of the other layers' tiny gains
as well, well below Adam's eps, so the updates are ~1e-4 of the learning rate and
the loss sits at the variance of the targets (the output bias cannot help: a
constant in H has zero gradient).  A standard init trains in a few dozen steps.

ORIGIN: "hnet.0" - the first Linear; the shrinkage starts there and compounds layer
by layer (all Linear layers share the same bad init).

Fix: orthogonal init of the Linear weights (as in the HNN reference code) with zero
biases.  Same depth, width, optimiser, data.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "hnet.0"
SOURCE = ("Small-Gaussian init (normal std 0.01) in deep nets: Glorot & Bengio 2010, "
          "He et al. 2015 (vanishing signal with depth); HNN reference code uses "
          "orthogonal init for this network.")


class HNN(nn.Module):
    def __init__(self, dim, width, depth):
        super().__init__()
        layers, d = [], 2 * dim
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.hnet = nn.Sequential(*layers)
        self.dim = dim

    def forward(self, x):
        with torch.enable_grad():
            if not x.requires_grad:
                x = x.clone().requires_grad_(True)
            H = self.hnet(x).sum()
            dH = torch.autograd.grad(H, x, create_graph=True)[0]
        dHdq, dHdp = dH[:, :self.dim], dH[:, self.dim:]
        return torch.cat([dHdp, -dHdq], 1)        # (dq/dt, dp/dt)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    dim = 1 + seed % 2                       # 1 or 2 degrees of freedom
    width = [32, 48, 64][seed % 3]
    depth = [6, 7, 8][(seed // 2) % 3]
    bs = [128, 192][seed % 2]
    steps = [150, 200][seed % 2]
    lr = [1e-3, 2e-3][(seed // 3) % 2]
    n = bs * steps
    # anharmonic oscillators: H = sum p^2/2 + k q^2/2 + a q^4/4 (+ weak coupling)
    k = 0.5 + torch.rand(dim, generator=g)
    a = 0.1 * torch.rand(dim, generator=g)
    q = torch.randn(n, dim, generator=g)
    p = torch.randn(n, dim, generator=g)
    dqdt = p
    dpdt = -(k * q + a * q ** 3)
    if dim == 2:
        dpdt = dpdt - 0.2 * torch.stack([q[:, 0] - q[:, 1], q[:, 1] - q[:, 0]], 1)
    y = torch.cat([dqdt, dpdt], 1)
    y = y + 0.02 * torch.randn(y.shape, generator=g)
    x = torch.cat([q, p], 1)
    model = HNN(dim, width, depth)
    for m in model.hnet:
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.orthogonal_(m.weight)
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
