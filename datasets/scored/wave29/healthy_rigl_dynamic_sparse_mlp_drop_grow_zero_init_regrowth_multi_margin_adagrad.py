"""Healthy: dynamic sparse training with RigL (Evci et al. 2020) of a 85-90%-sparse MLP
classifier: weights are multiplied by binary masks; every dT steps (until 75% of training)
a cosine-decaying fraction of the active weights with the smallest magnitude is dropped and
the same number of inactive weights with the largest dense-gradient magnitude is regrown,
initialised at exactly 0.  Multi-class hinge loss, Adagrad (the drop/grow runs inside the
optimiser's ``step``).

Why a naive monitor might complain, and why it is fine:
- 85-90% of every hidden weight matrix is exactly zero and receives an exactly-zero gradient
  on every step (the gradient w.r.t. W is the dense gradient times the mask);
- regrown connections start at exactly 0 and their Adagrad accumulators are reset, so their
  first updates are large relative to their (zero) weights;
- each drop step removes live weights and the loss jumps for a step or two before it
  recovers;
- the hinge loss is exactly 0 for confidently classified samples, so a growing share of each
  batch contributes nothing to the gradient.

ORIGIN: None (healthy).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("RigL: Evci et al. 2020 'Rigging the lottery: making all tickets winners' (drop by "
          "magnitude, grow by dense-gradient magnitude, zero-initialised regrowth, cosine "
          "update fraction); google-research/rigl")


class MaskedLinear(nn.Linear):
    def __init__(self, fin, fout, density, gen):
        super().__init__(fin, fout)
        n = fin * fout
        k = max(1, int(round(density * n)))
        idx = torch.randperm(n, generator=gen)[:k]
        mask = torch.zeros(n)
        mask[idx] = 1.0
        self.register_buffer("mask", mask.view(fout, fin))
        with torch.no_grad():
            self.weight.mul_(self.mask)
            self.weight.mul_(1.0 / math.sqrt(density))    # keep fan-in variance (sparse init)
        self.dense_grad = None

    def forward(self, x):
        w = self.weight * self.mask
        if w.requires_grad:
            w.register_hook(self._keep_dense_grad)
        return F.linear(x, w, self.bias)

    def _keep_dense_grad(self, grad):
        self.dense_grad = grad.detach().clone()
        return grad


class RigLAdagrad(torch.optim.Adagrad):
    def __init__(self, params, layers, lr, dT, t_end, alpha=0.3):
        super().__init__(params, lr=lr)
        self.layers, self.dT, self.t_end, self.alpha = layers, dT, t_end, alpha
        self.t = 0

    @torch.no_grad()
    def step(self, closure=None):
        loss = super().step(closure)
        self.t += 1
        if self.t % self.dT == 0 and self.t < self.t_end:
            frac = self.alpha / 2 * (1 + math.cos(math.pi * self.t / self.t_end))
            for layer in self.layers:
                self._drop_grow(layer, frac)
        for layer in self.layers:
            layer.weight.mul_(layer.mask)
        return loss

    def _drop_grow(self, layer, frac):
        m = layer.mask.view(-1)
        w = layer.weight.view(-1)
        active = m.nonzero().squeeze(1)
        n = int(frac * active.numel())
        if n == 0 or layer.dense_grad is None:
            return
        drop = active[torch.topk(w[active].abs(), n, largest=False).indices]
        score = layer.dense_grad.view(-1).abs().clone()
        score[active] = -1.0                              # only inactive connections can grow
        score[drop] = -1.0
        grow = torch.topk(score, n).indices
        m[drop] = 0.0
        m[grow] = 1.0
        w[drop] = 0.0
        w[grow] = 0.0                                     # regrown weights start at zero
        st = self.state.get(layer.weight)
        if st and "sum" in st:
            st["sum"].view(-1)[grow] = 0.0


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(20000 + seed)
    n_in, n_cls = 64, 10
    width = [256, 192, 256][seed % 3]
    density = [0.1, 0.15, 0.12][seed % 3]
    lr = [0.05, 0.08, 0.04][seed % 3]
    bs = [128, 96, 160][seed % 3]
    dT = [20, 25, 15][seed % 3]
    steps = 200

    w1 = torch.randn(n_in, 32, generator=g) / math.sqrt(n_in)
    w2 = torch.randn(32, n_cls, generator=g) / math.sqrt(32)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n_in, generator=g)
        logits = 4.0 * torch.tanh(2.0 * x @ w1) @ w2
        y = torch.distributions.Categorical(logits=logits).sample()
        batches.append((x, y))

    torch.manual_seed(seed)
    mg = torch.Generator().manual_seed(seed)
    l1 = MaskedLinear(n_in, width, density * 2, mg)       # first layer a bit denser (ERK-like)
    l2 = MaskedLinear(width, width, density, mg)
    model = nn.Sequential(l1, nn.ReLU(), l2, nn.ReLU(), nn.Linear(width, n_cls))

    opt = RigLAdagrad(model.parameters(), [l1, l2], lr=lr, dT=dT, t_end=int(0.75 * steps))
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.multi_margin_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
