"""ICM-style inverse-dynamics model (Pathak et al. 2017) on a tiny synthetic point-mass world.

Mechanism: the feature encoder phi(s) is a deep plain ReLU MLP (no normalisation, 6-8 layers) and
every Linear is initialised with the Caffe "gaussian" filler, std=0.01, bias 0 -- the habit carried
over from old Caffe/TF1 prototxts.  With widths 64-128 each layer multiplies the activation scale by
about 0.01*sqrt(width/2) ~ 0.06-0.08, so after the encoder phi(s) and phi(s') are ~1e-8 of the input
scale from step 0 and the inverse head only sees its bias.  The cross-entropy over the 4 actions sits
at log(4) and the backward signal into the encoder shrinks by the same factor per layer, so SGD
cannot move it: the loss stalls.

ORIGIN: "encoder.0", the first Linear of the encoder, where the geometric shrinking begins (every
later layer continues it, but the first one is where the activation scale first collapses).

Fix: Kaiming-normal (fan_in, relu) initialisation of the same layers; everything else unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("Caffe 'gaussian' weight_filler std 0.01 copied into deep plain ReLU nets (Simonyan & "
          "Zisserman 2014 note that deep nets with N(0,0.01) init do not train; He et al. 2015 "
          "sec. 2.2); ICM inverse model from Pathak et al. 2017 'Curiosity-driven Exploration'")


class ICMInverse(nn.Module):
    def __init__(self, obs_dim, width, depth, feat_dim, n_actions):
        super().__init__()
        layers = [nn.Linear(obs_dim, width), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers += [nn.Linear(width, feat_dim)]
        self.encoder = nn.Sequential(*layers)
        self.inverse = nn.Sequential(nn.Linear(2 * feat_dim, width), nn.ReLU(),
                                     nn.Linear(width, n_actions))

    def forward(self, s, s_next):
        f, f2 = self.encoder(s), self.encoder(s_next)
        return self.inverse(torch.cat([f, f2], dim=-1))


def _observe(pos, proj, freqs):
    # rich non-linear observation of a 2-D position (like a rendered sensor vector)
    z = pos @ proj
    return torch.cat([torch.sin(z * freqs), torch.cos(z * freqs)], dim=-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 6 + seed % 3
    width = [64, 96, 128][seed % 3]
    lr = [0.01, 0.006, 0.008][seed % 3]
    batch = [64, 96, 128][(seed + 1) % 3]
    steps = 150
    obs_half, feat_dim, n_actions = 12, 32, 4

    proj = torch.randn(2, obs_half, generator=g)
    freqs = torch.linspace(0.5, 2.0, obs_half)
    moves = torch.tensor([[0.0, 1.0], [0.0, -1.0], [-1.0, 0.0], [1.0, 0.0]]) * 0.25

    torch.manual_seed(seed)
    model = ICMInverse(2 * obs_half, width, depth, feat_dim, n_actions)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, mean=0.0, std=0.01)   # Caffe gaussian filler
            nn.init.zeros_(m.bias)

    batches = []
    for _ in range(steps):
        pos = torch.rand(batch, 2, generator=g) * 2 - 1
        a = torch.randint(0, n_actions, (batch,), generator=g)
        nxt = (pos + moves[a] + 0.03 * torch.randn(batch, 2, generator=g)).clamp(-1.2, 1.2)
        batches.append(((_observe(pos, proj, freqs), _observe(nxt, proj, freqs)), a))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": lambda out, y: F.cross_entropy(out, y),
            "batches": batches, "steps": steps}
