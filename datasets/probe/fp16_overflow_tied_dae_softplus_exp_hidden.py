"""Denoising autoencoder (Vincent et al. 2008) with tied weights and softplus hidden units written the
Theano way, log(1 + exp(W x + b)) (Theano rewrote it to a stable softplus; the PyTorch port does not).
Trained under float16 autocast on CPU with no GradScaler: F.linear returns float16, so exp() runs in
float16 and overflows past 65504 once a hidden pre-activation exceeds ~11.1. Early pre-activations are
small; as the filters lock onto the strokes they grow, a hidden unit becomes inf and the loss NaN mid-run.
In float32 the same expression is safe up to ~88.
fixed=True: the encoder non-linearity is computed in float32 (autocast disabled for it); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "encoder"
SOURCE = ("Theano deep learning tutorial dA / RBM code ported to PyTorch with T.log(1 + T.exp(x)) kept "
          "verbatim, then trained with torch.autocast(float16); half-precision exp overflow above ~11 "
          "is the documented reason softplus/exp are autocast to fp32 on CUDA")


class SoftplusEncoder(nn.Module):
    def __init__(self, n_vis, n_hid, fixed):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_hid, n_vis).uniform_(-4 * (6 / (n_vis + n_hid)) ** 0.5,
                                                                       4 * (6 / (n_vis + n_hid)) ** 0.5))
        self.bias = nn.Parameter(torch.zeros(n_hid))
        self.fixed = fixed

    def forward(self, x):
        if self.fixed:
            with torch.autocast("cpu", enabled=False):
                return torch.log(1 + torch.exp(F.linear(x.float(), self.weight, self.bias)))
        return torch.log(1 + torch.exp(F.linear(x, self.weight, self.bias)))


class TiedDAE(nn.Module):
    def __init__(self, n_vis, n_hid, corruption, fixed):
        super().__init__()
        self.encoder = SoftplusEncoder(n_vis, n_hid, fixed)
        self.v_bias = nn.Parameter(torch.zeros(n_vis))
        self.corruption = corruption

    def forward(self, x, keep):
        h = self.encoder(x * keep)                                   # masking noise
        return F.linear(h, self.encoder.weight.t(), self.v_bias)     # reconstruction logits


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    side, n_hid, n_cls, bs, steps = 16, 64, 10, 64, 200
    n_vis = side * side
    # binary "digits": each class is a union of 4 random 3-pixel-wide strokes, pixels flipped with p=0.03
    protos = torch.zeros(n_cls, side, side)
    for c in range(n_cls):
        for _ in range(4):
            r0, c0 = torch.randint(0, side, (2,), generator=g).tolist()
            dr, dc = [t.item() for t in torch.randint(-1, 2, (2,), generator=g)]
            if dr == 0 and dc == 0:
                dc = 1
            for t in range(side):
                r, cc = r0 + dr * t, c0 + dc * t
                if 0 <= r < side and 0 <= cc < side:
                    protos[c, r, cc:cc + 3] = 1
    protos = protos.view(n_cls, n_vis)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        flip = (torch.rand(bs, n_vis, generator=g) < 0.03).float()
        v = (protos[y] - flip).abs()
        keep = (torch.rand(bs, n_vis, generator=g) > 0.25).float()
        batches.append(((v, keep), v))
    model = TiedDAE(n_vis, n_hid, 0.25, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    # Theano dA cost: per-example cross-entropy summed over pixels, averaged over the batch
    loss_fn = lambda logits, v: F.binary_cross_entropy_with_logits(logits, v, reduction="sum") / v.shape[0]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
