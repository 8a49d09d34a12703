"""Denoising score matching (noise-conditional, epsilon-parameterised, DDPM/NCSN-style) on a
2-4-D mixture-of-Gaussians toy distribution, with a deep ReLU score MLP whose Linear layers were
all initialised with the old Caffe "gaussian filler" N(0, 0.01^2), zero bias (applied with
model.apply(init_fn)).

Mechanism. With std 0.01 and fan-in 96-128, each Linear+ReLU multiplies the activation scale by
about 0.01*sqrt(fan_in/2) ~ 0.07-0.08. Over 9-11 layers the signal reaching the output layer is
~1e-11 of the input from step 0, and the backward signal shrinks the same way, so every weight
gradient is ~1e-11..1e-12 -- far below Adam's eps (1e-8), so the effective step is ~lr*1e-3 per
step. Only the output bias learns (to the mean of eps, ~0); the predicted noise is a constant and
the DSM loss sits at E||eps||^2 / d ~ 1 for the whole run (a stall). Nothing is wrong with the
data, the noise schedule, the lr or the loss.

ORIGIN = "net.0": the first Linear is where the geometric shrinkage starts (its output is already
~0.08x its input); every following layer repeats it. (The root cause is the init of all Linear
layers; the first one is where activations first go bad.)

Fix (only the root cause): Kaiming (He) normal init for the ReLU layers (fan_in, gain sqrt 2) and
Xavier for the output layer; same architecture, data, noise levels and optimiser.

Seed changes: data dimension, number of mixture modes, depth, width, batch size, lr.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("He et al. 2015 (Delving deep into rectifiers) sec. 2.2 / VGG: deep plain nets with "
          "fixed-std N(0, 0.01) Gaussian init (Caffe 'gaussian' filler) do not converge; "
          "Glorot & Bengio 2010 on vanishing activations with depth.")


class ScoreMLP(nn.Module):
    """eps_theta(x_noisy, sigma): input is x concatenated with a small sigma embedding."""

    def __init__(self, d, width, depth):
        super().__init__()
        layers = [nn.Linear(d + 2, width), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers += [nn.Linear(width, d)]
        self.net = nn.Sequential(*layers)

    def forward(self, x_noisy, sigma):
        ls = sigma.log()
        emb = torch.cat([ls, torch.sin(ls)], -1)
        return self.net(torch.cat([x_noisy, emb], -1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    d = [2, 3, 4][seed % 3]
    modes = [6, 8, 5][(seed + 1) % 3]
    depth = [9, 10, 11][(seed + 2) % 3]
    width = [96, 128][seed % 2]
    batch = [128, 256][(seed // 2) % 2]
    lr = [1e-3, 5e-4, 8e-4][seed % 3]
    steps = 250
    sigmas = torch.exp(torch.linspace(math.log(0.05), math.log(1.0), 10))

    model = ScoreMLP(d, width, depth)
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    for i, m in enumerate(linears):
        if fixed:
            if i < len(linears) - 1:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.xavier_normal_(m.weight)
        else:
            nn.init.normal_(m.weight, 0.0, 0.01)
        nn.init.zeros_(m.bias)

    centres = torch.randn(modes, d, generator=g)
    centres = 2.0 * centres / centres.norm(dim=-1, keepdim=True)

    batches = []
    for _ in range(steps):
        idx = torch.randint(0, modes, (batch,), generator=g)
        x0 = centres[idx] + 0.05 * torch.randn(batch, d, generator=g)
        sig = sigmas[torch.randint(0, len(sigmas), (batch,), generator=g)].unsqueeze(-1)
        eps = torch.randn(batch, d, generator=g)
        batches.append(((x0 + sig * eps, sig), eps))

    def loss_fn(eps_hat, eps):
        return (eps_hat - eps).pow(2).mean()

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
