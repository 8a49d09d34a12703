"""Rate-coded spiking MLP (LIF neurons, surrogate-gradient BPTT) that never fires.

Mechanism: the user ported a Caffe-era ``weights_init`` that draws every Linear weight
from N(0, 0.01^2) with zero bias.  With sparse Poisson input spikes the input current of
the first LIF layer is ~N(0, 0.03^2), so the membrane potential settles around 0.1-0.3,
far below the firing threshold (1.0).  The rectangular (STBP-style) surrogate gradient is
non-zero only inside |v - thr| < 0.5, so the first LIF layer emits no spikes AND passes no
gradient; everything above it sees an all-zero spike train.  Only the readout bias can
learn, which for balanced classes is worth nothing: the cross-entropy sits at log(C).

ORIGIN is ``fc1``: the first badly initialised projection whose output keeps ``lif1``
sub-threshold; every later layer is silent only because ``fc1`` is.

Fix: keep PyTorch's default (kaiming-uniform) Linear initialisation scaled by the usual
SNN gain, so membrane potentials reach threshold from step 0.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "fc1"
SOURCE = ("Known SNN pitfall (snnTorch / SpyTorch discussions, Zenke & Vogels 2021 on "
          "surrogate-gradient initialisation): too-small weights leave LIF layers silent and "
          "a compact-support surrogate then gives exactly zero gradient")


class RectSpike(torch.autograd.Function):
    """Heaviside forward, rectangular surrogate backward (Wu et al. 2018, STBP)."""

    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        return (v > 0).to(v.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        (v,) = ctx.saved_tensors
        return grad_out * (v.abs() < 0.5).to(grad_out.dtype)


class LIF(nn.Module):
    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, current):  # current: (T, B, H)
        v = torch.zeros_like(current[0])
        spikes = []
        for t in range(current.shape[0]):
            v = self.beta * v + current[t]
            s = RectSpike.apply(v - self.threshold)
            v = v - s.detach() * self.threshold  # soft reset
            spikes.append(s)
        return torch.stack(spikes)


class SpikingMLP(nn.Module):
    def __init__(self, d_in, hidden, n_classes):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.lif1 = LIF()
        self.fc2 = nn.Linear(hidden, hidden)
        self.lif2 = LIF()
        self.fc3 = nn.Linear(hidden, n_classes)

    def forward(self, spikes_in):  # (T, B, D)
        s1 = self.lif1(self.fc1(spikes_in))
        s2 = self.lif2(self.fc2(s1))
        return self.fc3(s2).mean(0)  # rate-decoded logits


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(T=10, hidden=128, lr=2e-3, bs=64, steps=80),
           dict(T=14, hidden=96, lr=1e-3, bs=48, steps=100),
           dict(T=8, hidden=160, lr=3e-3, bs=32, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    d_in, n_classes = 64, 10

    model = SpikingMLP(d_in, cfg["hidden"], n_classes)
    if fixed:
        # default kaiming-uniform init, with the usual x2 SNN gain so neurons fire
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, nn.Linear):
                    m.weight.mul_(2.0)
    else:
        def weights_init(m):  # Caffe "gaussian std 0.01" filler
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, 0.01)
                nn.init.zeros_(m.bias)
        model.apply(weights_init)

    protos = torch.rand(n_classes, d_in, generator=g)  # firing-rate prototypes
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_classes, (cfg["bs"],), generator=g)
        rates = (0.7 * protos[y] + 0.3 * torch.rand(cfg["bs"], d_in, generator=g)) * 0.6
        spikes = (torch.rand(cfg["T"], cfg["bs"], d_in, generator=g) < rates).float()
        batches.append((spikes, y))

    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=cfg["steps"])
