"""Krotov-Hopfield dense associative memory classifier trained under fp16 autocast.

Mechanism: the classifier (Krotov & Hopfield 2016) stores K memories over (pixels + class
units).  For class alpha the network compares the energy with the class unit on vs off:
c_alpha = tanh(beta * sum_mu [F(xi_mu . s_on(alpha)) - F(xi_mu . s_off)]), with the
rectified polynomial F(x) = relu(x)**n (n = 3-4) and beta = 1/T**n.  Under
``torch.autocast(float16)`` the overlaps ``state @ xi.T`` are matmuls, so they come out in
float16 and the n-th power is evaluated in half precision: any overlap above
65504**(1/n) (16 for n=4, 40 for n=3) gives +inf.  Training starts calmly (small random
memories, overlaps ~1); as the memories align with their class prototypes over 256-400
pixels the overlaps grow, and after 20-70 steps the first one passes the threshold: F
returns inf, inf - inf = NaN, and the loss and gradients are NaN.

ORIGIN is ``dam``: the DenseAssociativeMemory module whose half-precision power is the
first op to produce a non-finite value.

Fix: evaluate the rectified polynomial in float32 (``on.float()``, ``off.float()``),
keeping the autocast matmuls.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "dam"
SOURCE = ("Krotov & Hopfield 2016 'Dense Associative Memory for Pattern Recognition' "
          "(rectified polynomial energy, n up to 30); PyTorch re-implementations run under "
          "torch.autocast float16")


class DenseAssociativeMemory(nn.Module):
    def __init__(self, n_pixels, n_classes, n_memories, power, temperature, fp32_energy):
        super().__init__()
        self.n_pixels, self.n_classes = n_pixels, n_classes
        self.power = power
        self.beta = 1.0 / temperature ** power
        self.fp32_energy = fp32_energy
        self.memories = nn.Parameter(0.05 * torch.randn(n_memories, n_pixels + n_classes))

    def forward(self, v):  # v: (B, n_pixels) in [-1, 1]
        B, C = v.shape[0], self.n_classes
        # full network states: pixels clamped to v, class units all -1 ("off") or with
        # unit alpha switched to +1 ("on", one state per class)
        cls_off = -torch.ones(B, C, dtype=v.dtype)
        cls_on = 2 * torch.eye(C, dtype=v.dtype) - 1                      # (C, C)
        state_off = torch.cat([v, cls_off], dim=1)                        # (B, D+C)
        state_on = torch.cat([v.unsqueeze(1).expand(B, C, -1),
                              cls_on.unsqueeze(0).expand(B, C, C)], dim=2)  # (B, C, D+C)
        off = (state_off @ self.memories.t()).unsqueeze(1)                # (B, 1, K)
        on = state_on @ self.memories.t()                                 # (B, C, K)
        if self.fp32_energy:
            on, off = on.float(), off.float()
        energy_gap = F.relu(on) ** self.power - F.relu(off) ** self.power
        return torch.tanh(self.beta * energy_gap.sum(-1))                 # (B, C)


class DAMClassifier(nn.Module):
    def __init__(self, n_pixels, n_classes, n_memories, power, temperature, fp32_energy):
        super().__init__()
        self.dam = DenseAssociativeMemory(n_pixels, n_classes, n_memories, power,
                                          temperature, fp32_energy)

    def forward(self, v):
        return self.dam(v)


def krotov_loss(c, y):
    t = 2 * F.one_hot(y, c.shape[1]).to(c.dtype) - 1
    return ((c - t) ** 2).sum(1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(D=256, K=40, n=4, T=8.0, bs=64, lr=5e-3, steps=100),
           dict(D=324, K=60, n=3, T=15.0, bs=48, lr=4e-3, steps=90),
           dict(D=400, K=30, n=4, T=10.0, bs=96, lr=3e-3, steps=110)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    n_classes = 6
    protos = torch.sign(torch.randn(n_classes, cfg["D"], generator=g))
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_classes, (cfg["bs"],), generator=g)
        flip = torch.rand(cfg["bs"], cfg["D"], generator=g) < 0.25
        v = torch.where(flip, -protos[y], protos[y])
        batches.append((v, y))
    model = DAMClassifier(cfg["D"], n_classes, cfg["K"], cfg["n"], cfg["T"], fp32_energy=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=krotov_loss, batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16)
