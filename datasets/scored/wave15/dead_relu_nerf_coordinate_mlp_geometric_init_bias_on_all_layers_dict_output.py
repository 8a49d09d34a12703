"""NeRF-style coordinate MLP (positional encoding, 6 ReLU layers with the encoded
input concatenated back in at layer 4, dict output {"rgb", "sigma"}) fitted to
colours and densities sampled from a synthetic scene.

Mechanism: the "geometric initialisation" of SAL/IGR (Atzmon & Lipman 2020) sets the
density output's bias to -radius (radius=1) so the field starts as a sphere. The
init loop applies `nn.init.constant_(m.bias, -radius)` to every nn.Linear instead of
the last one. With encoded inputs in [-1, 1] the first layer's pre-activations have
std ~0.4, so a bias of -1 leaves almost no unit positive, and every deeper layer
(receiving ~zeros) sits at exactly -1: the ReLUs are dead from step 0, no gradient
reaches them, the outputs are constant and the loss plateaus - the NeRF
"collapses to a constant image" failure.

ORIGIN: `layers.0.1`, the first ReLU, which dies first and starves all later layers.

Fix: apply the -radius bias to the density head only (hidden biases stay default).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "layers.0.1"
SOURCE = ("NeRF (Mildenhall et al. 2020) MLP; SAL geometric init (Atzmon & Lipman 2020) bias "
          "-radius misapplied to all layers; nerf-pytorch 'constant/black output' reports.")


def posenc(x, n_freq):
    freqs = 2.0 ** torch.arange(n_freq) * math.pi
    ang = x.unsqueeze(-1) * freqs
    return torch.cat([x, ang.sin().flatten(1), ang.cos().flatten(1)], dim=-1)


class NeRFMLP(nn.Module):
    def __init__(self, n_freq, width, depth=6, skip=4):
        super().__init__()
        self.n_freq = n_freq
        d_in = 3 + 6 * n_freq
        self.skip = skip
        layers = []
        for i in range(depth):
            cin = d_in if i == 0 else width + (d_in if i == skip else 0)
            layers.append(nn.Sequential(nn.Linear(cin, width), nn.ReLU()))
        self.layers = nn.ModuleList(layers)
        self.sigma = nn.Linear(width, 1)
        self.rgb = nn.Linear(width, 3)

    def forward(self, xyz):
        e = posenc(xyz, self.n_freq)
        h = e
        for i, layer in enumerate(self.layers):
            if i == self.skip:
                h = torch.cat([h, e], dim=-1)
            h = layer(h)
        return {"rgb": torch.sigmoid(self.rgb(h)), "sigma": torch.relu(self.sigma(h)).squeeze(-1)}


def _scene(p):
    r = p.norm(dim=-1)
    sigma = 5.0 * torch.sigmoid(10 * (0.6 - r))
    rgb = torch.stack([0.5 + 0.5 * torch.sin(3 * p[:, 0]), 0.5 + 0.5 * torch.cos(2 * p[:, 1]),
                       torch.sigmoid(3 * p[:, 2])], dim=-1)
    return rgb, sigma


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=64, nf=4, bs=64, steps=80),
           dict(w=48, nf=5, bs=48, steps=90),
           dict(w=64, nf=3, bs=80, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4242 + seed)
    model = NeRFMLP(cfg["nf"], cfg["w"])
    batches = []
    for _ in range(cfg["steps"]):
        p = torch.rand(cfg["bs"], 3, generator=g) * 2 - 1
        rgb, sigma = _scene(p)
        batches.append((p, {"rgb": rgb, "sigma": sigma}))

    def loss_fn(out, tgt):
        return ((out["rgb"] - tgt["rgb"]) ** 2).mean() + 0.01 * ((out["sigma"] - tgt["sigma"]) ** 2).mean()

    targets = [model.sigma] if fixed else [m for m in model.modules() if isinstance(m, nn.Linear)]
    for m in targets:
        nn.init.constant_(m.bias, -1.0)          # geometric-init radius
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
