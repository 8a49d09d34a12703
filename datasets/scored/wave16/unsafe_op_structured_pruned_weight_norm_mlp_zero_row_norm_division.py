"""Weight-normalised MLP hit by structured (neuron) pruning: w = g * v / ||v|| on an all-zero row.

Mechanism: the hidden layers are weight-normalised (w_i = g_i * v_i / ||v_i||, Salimans &
Kingma 2016, written by hand as ``g * v / v.norm(dim=1, keepdim=True)``).  Mid-run, a
structured magnitude-pruning step removes the 25% of hidden units of every hidden layer
with the smallest |g| by zeroing their rows through a mask on v (the usual "prune the
direction parameter with a mask buffer" pattern).  For a pruned unit the row of v * mask is
all zeros, its norm is exactly 0, and the weight is computed as 0 / 0 = NaN.  The very next
forward pass produces NaN activations in that layer, the loss is NaN and the backward pass
writes NaN into the optimiser state.  The run was calm until then.

ORIGIN: ``layers.0``, the first pruned weight-normalised layer: its 0/0 is the first
non-finite value of the forward pass.

Fix: guard the division (``v.norm(...).clamp_min(1e-12)``), so a pruned row gives an exact
zero weight; the pruning schedule, masks and everything else are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "layers.0"
SOURCE = ("Weight Normalization (Salimans & Kingma 2016) combined with structured pruning masks on weight_v "
          "(cf. torch.nn.utils.weight_norm + torch.nn.utils.prune.ln_structured); reports of NaN right after "
          "a pruning step when a whole direction row is zeroed")


class WNLinear(nn.Module):
    def __init__(self, d_in, d_out, safe):
        super().__init__()
        self.v = nn.Parameter(torch.randn(d_out, d_in) / d_in ** 0.5)
        self.g = nn.Parameter(torch.full((d_out, 1), 2 ** 0.5))
        self.bias = nn.Parameter(torch.zeros(d_out))
        self.register_buffer("mask", torch.ones(d_out, 1))
        self.safe = safe

    def forward(self, x):
        v = self.v * self.mask
        norm = v.norm(dim=1, keepdim=True)
        if self.safe:
            norm = norm.clamp_min(1e-12)
        return F.linear(x, self.g * v / norm, self.bias)

    @torch.no_grad()
    def prune_units(self, frac):
        alive = self.mask.squeeze(1) > 0
        score = self.g.abs().squeeze(1).masked_fill(~alive, float("inf"))
        k = int(frac * int(alive.sum()))
        idx = score.topk(k, largest=False).indices
        self.mask[idx] = 0.0


class WNMLP(nn.Module):
    def __init__(self, d_in, width, depth, n_cls, safe):
        super().__init__()
        dims = [d_in] + [width] * depth
        self.layers = nn.ModuleList([WNLinear(a, b, safe) for a, b in zip(dims[:-1], dims[1:])])
        self.act = nn.ReLU()
        self.head = nn.Linear(width, n_cls)

    def forward(self, x):
        for layer in self.layers:
            x = self.act(layer(x))
        return self.head(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(width=128, depth=3, lr=2e-3, bs=64, steps=100, prune_at=40),
           dict(width=96, depth=2, lr=3e-3, bs=32, steps=120, prune_at=65),
           dict(width=192, depth=3, lr=1e-3, bs=128, steps=90, prune_at=30)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2121 + seed)
    d_in, n_cls = 40, 7
    centers = torch.randn(n_cls, d_in, generator=g) * 0.45
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((centers[y] + torch.randn(cfg["bs"], d_in, generator=g), y))
    model = WNMLP(d_in, cfg["width"], cfg["depth"], n_cls, safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    state = {"step": 0}

    def structured_prune(optimizer, args, kwargs):
        state["step"] += 1
        if state["step"] == cfg["prune_at"]:
            for layer in model.layers:
                layer.prune_units(0.25)

    opt.register_step_post_hook(structured_prune)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
