"""Conditional VAE (Sohn et al. 2015) on standardised sensor profiles, deep MLP encoder and
decoder, trained with SGD + momentum.

Mechanism: the user copied a Caffe/TF1-era ``weights_init`` that draws every Linear weight
from N(0, 0.01^2).  With widths 96-160 each ReLU layer multiplies the activation scale by
~0.01*sqrt(width/2) ~ 0.07-0.09, so after the 4-6 encoder layers the posterior mean/logvar are
~1e-6 and after the decoder stack the reconstruction is the output bias alone.  The backward
signal shrinks by the same factor in the other direction, so SGD gradients of every weight
matrix are ~0: the decoder can only learn its bias, which is already the (zero) mean of the
standardised data.  Both the reconstruction term and the KL term sit still from step 0.

ORIGIN: ``encoder.0`` -- the first Linear of the (deep, N(0,0.01)-initialised) stack, where
the geometric shrinking of activations starts.

Fix: Kaiming-normal (ReLU gain) init of the hidden Linears (zero biases), PyTorch default
init for the two linear output heads; same SGD recipe.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("CVAE for structured output prediction (Sohn et al. 2015); Caffe/TF1 "
          "gaussian_initializer(std=0.01) weights_init copied into a deep PyTorch MLP, "
          "forum reports of a VAE 'stuck at the mean' with KL ~ 0 and no learning under SGD")


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 2):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), nn.ReLU()]
    layers.append(nn.Linear(sizes[-2], sizes[-1]))
    return nn.Sequential(*layers)


class CVAE(nn.Module):
    def __init__(self, x_dim, c_dim, z_dim, width, depth):
        super().__init__()
        self.z_dim = z_dim
        self.encoder = mlp([x_dim + c_dim] + [width] * depth + [2 * z_dim])
        self.decoder = mlp([z_dim + c_dim] + [width] * depth + [x_dim])

    def forward(self, x, c, eps):
        h = self.encoder(torch.cat([x, c], 1))
        mu, logvar = h.chunk(2, dim=1)
        z = mu + torch.exp(0.5 * logvar) * eps
        recon = self.decoder(torch.cat([z, c], 1))
        return recon, mu, logvar


def make_loss(beta):
    def loss_fn(out, x):
        recon, mu, logvar = out
        rec = 0.5 * ((recon - x) ** 2).sum(1)
        kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1)
        return (rec + beta * kl).mean()
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(x_dim=24, n_cls=6, z=4, width=128, depth=4, bs=64, lr=0.003, steps=150),
           dict(x_dim=32, n_cls=8, z=6, width=160, depth=5, bs=48, lr=0.002, steps=120),
           dict(x_dim=20, n_cls=5, z=3, width=96, depth=6, bs=96, lr=0.002, steps=180)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7 + seed)
    model = CVAE(cfg["x_dim"], cfg["n_cls"], cfg["z"], cfg["width"], cfg["depth"])
    for stack in (model.encoder, model.decoder):
        linears = [m for m in stack if isinstance(m, nn.Linear)]
        for i, m in enumerate(linears):
            if not fixed:
                nn.init.normal_(m.weight, 0.0, 0.01)          # copied weights_init
            elif i < len(linears) - 1:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")  # ReLU layers
            else:
                continue                                       # heads keep the default init
            nn.init.zeros_(m.bias)

    # synthetic "sensor profiles": class-specific prototype + low-dim smooth variation
    t = torch.linspace(0, 1, cfg["x_dim"])
    protos = torch.randn(cfg["n_cls"], cfg["x_dim"], generator=g)
    freqs = torch.arange(1, 4).float()
    basis = torch.stack([torch.sin(2 * 3.14159 * f * t) for f in freqs])  # 3 x D
    n = cfg["bs"] * cfg["steps"]
    cls = torch.randint(0, cfg["n_cls"], (n,), generator=g)
    coef = torch.randn(n, 3, generator=g)
    x = protos[cls] + coef @ basis + 0.1 * torch.randn(n, cfg["x_dim"], generator=g)
    x = (x - x.mean(0)) / x.std(0)
    c = torch.nn.functional.one_hot(cls, cfg["n_cls"]).float()
    eps = torch.randn(n, cfg["z"], generator=g)
    batches = []
    for i in range(cfg["steps"]):
        s = slice(i * cfg["bs"], (i + 1) * cfg["bs"])
        batches.append(((x[s], c[s], eps[s]), x[s]))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(1.0), batches=batches,
                steps=cfg["steps"])
