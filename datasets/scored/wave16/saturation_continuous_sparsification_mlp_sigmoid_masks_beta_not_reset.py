"""Continuous Sparsification MLP whose sigmoid mask temperature beta was not reset at the round start.

Mechanism: Continuous Sparsification (Savarese, Silva & Maire, NeurIPS 2020) prunes by
multiplying every weight with a soft mask m = sigmoid(beta * s), s a learned score
initialised to s0, with an L1 penalty on m; beta is annealed multiplicatively from 1 to
beta_T (~200) within each pruning round, and at the start of a round s is reset to s0 and
beta to 1.  Here the round restart resets s (to s0 = -0.05, i.e. masks start at 0.49 when
beta = 1) but keeps beta at the final value of the previous round.  With beta ~200-300 every
mask is sigmoid(-10..-15) ~ 5e-5..3e-7: each masked layer multiplies its input by ~0, the
logits carry no information about the input, and the gradients are multiplied by the
sigmoid's derivative beta * m * (1 - m) ~ 1e-2..1e-4 (scores) or by m (weights), while
the L1 mask penalty keeps pushing every score further down.  The
sigmoids are saturated in their flat tail; nothing can open them again in a run of this
length and the loss sits at the class-prior entropy.

ORIGIN: ``layers.0.mask``, the soft mask of the first layer: it is the first saturated
sigmoid (its output ~1e-5 kills the input signal, every later layer only adds to it).

Fix: reset beta to 1 at the start of the round (then anneal as usual); s0, the penalty,
the schedule's growth rate and everything else unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "layers.0.mask"
SOURCE = ("Continuous Sparsification (Savarese et al., NeurIPS 2020; lolemacs/continuous-sparsification: "
          "mask = sigmoid(temp * mask_weight), temp annealed per round and reset between rounds)")


class SoftMask(nn.Module):
    def __init__(self, shape, s0, beta):
        super().__init__()
        self.s = nn.Parameter(torch.full(shape, s0))
        self.beta = beta

    def forward(self):
        return torch.sigmoid(self.beta * self.s)


class CSLinear(nn.Module):
    def __init__(self, d_in, d_out, s0, beta):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        nn.init.kaiming_normal_(self.lin.weight, nonlinearity="relu")
        nn.init.zeros_(self.lin.bias)
        self.mask = SoftMask(self.lin.weight.shape, s0, beta)
        self.last_mask = None

    def forward(self, x):
        m = self.mask()
        self.last_mask = m
        return F.linear(x, self.lin.weight * m, self.lin.bias)


class CSMLP(nn.Module):
    def __init__(self, d_in, width, depth, n_cls, s0, beta):
        super().__init__()
        dims = [d_in] + [width] * depth
        self.layers = nn.ModuleList([CSLinear(a, b, s0, beta) for a, b in zip(dims[:-1], dims[1:])])
        self.act = nn.ReLU()
        self.head = CSLinear(width, n_cls, s0, beta)

    def set_beta(self, beta):
        for m in self.modules():
            if isinstance(m, SoftMask):
                m.beta = beta

    def forward(self, x):
        for layer in self.layers:
            x = self.act(layer(x))
        logits = self.head(x)
        masks = [l.last_mask for l in list(self.layers) + [self.head]]
        density = torch.cat([m.flatten() for m in masks]).mean()
        return logits, density


class CELossWithMaskL1(nn.Module):
    def __init__(self, lam):
        super().__init__()
        self.lam = lam

    def forward(self, out, y):
        logits, density = out
        return F.cross_entropy(logits, y) + self.lam * density


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(width=256, depth=2, lr=2e-3, bs=64, steps=100, beta_T=200.0),
           dict(width=192, depth=3, lr=3e-3, bs=32, steps=120, beta_T=300.0),
           dict(width=320, depth=2, lr=1e-3, bs=96, steps=90, beta_T=250.0)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3131 + seed)
    d_in, n_cls, s0 = 64, 8, -0.05
    centers = torch.randn(n_cls, d_in, generator=g) * 0.5
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((centers[y] + torch.randn(cfg["bs"], d_in, generator=g), y))
    beta0 = 1.0 if fixed else cfg["beta_T"]       # BUG (unfixed): beta carried over from the last round
    model = CSMLP(d_in, cfg["width"], cfg["depth"], n_cls, s0, beta0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    # per-iteration multiplicative temperature schedule, capped at beta_T (CS anneals beta within a round)
    growth = cfg["beta_T"] ** (1.0 / (2 * cfg["steps"]))
    state = {"beta": beta0}

    def anneal(optimizer, args, kwargs):
        state["beta"] = min(cfg["beta_T"], state["beta"] * growth)
        model.set_beta(state["beta"])

    opt.register_step_post_hook(anneal)
    return dict(model=model, optimizer=opt, loss_fn=CELossWithMaskL1(lam=0.1), batches=batches, steps=cfg["steps"])
