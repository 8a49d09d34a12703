"""SVD-compressed MLP whose factors were initialised with the singular values folded into BOTH factors.

Mechanism: a trained dense ReLU MLP is compressed by replacing every hidden weight matrix
W = U S V^T with a rank-r factorised layer (two thin Linears, V-side r x in then U-side
out x r), initialised from the truncated SVD and then fine-tuned.  The correct split is
U_r sqrt(S_r) and sqrt(S_r) V_r^T, whose product is the rank-r approximation of W.  The
helper instead does ``first.weight = S[:, None] * Vh[:r]`` and ``second.weight = U[:, :r] * S``
so the product is U S^2 V^T: every singular value is squared.  Trained weight matrices have
a decaying spectrum with a leading singular value of ~5-12, so each compressed layer
amplifies its leading directions by another factor of 5-12 on top of the intended gain.
The activation RMS grows geometrically with depth from step 0 (x4-x8 per layer, hundreds
at the last hidden layer; the cross-entropy starts at 10^2-10^3), the gradients are
enormous and the first few SGD steps send the loss to inf/NaN.

ORIGIN: ``layers.0``, the first factorised layer: it receives the well-scaled input and
is the first to multiply it by S^2 instead of S; the growth compounds from there.

Fix: split the singular values as sqrt(S) into each factor (product = U_r S_r V_r^T).
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Low-rank SVD compression of FC layers (Denton et al. 2014; Xue et al. 2013 'Restructuring of deep "
          "neural network acoustic models with SVD'); user bug reports 'compressed model outputs explode after "
          "SVD factorisation' caused by applying S to both factors")


class FactorisedLinear(nn.Module):
    """W ~ second.weight @ first.weight, i.e. two thin Linears (rank r bottleneck)."""

    def __init__(self, W, b, r, correct_split):
        super().__init__()
        out_f, in_f = W.shape
        U, S, Vh = torch.linalg.svd(W, full_matrices=False)
        self.first = nn.Linear(in_f, r, bias=False)
        self.second = nn.Linear(r, out_f)
        with torch.no_grad():
            if correct_split:
                s = S[:r].sqrt()
                self.first.weight.copy_(s[:, None] * Vh[:r])
                self.second.weight.copy_(U[:, :r] * s)
            else:
                self.first.weight.copy_(S[:r, None] * Vh[:r])       # BUG: S on both sides
                self.second.weight.copy_(U[:, :r] * S[:r])
            self.second.bias.copy_(b)

    def forward(self, x):
        return self.second(self.first(x))


def trained_like_weight(out_f, in_f, g, decay):
    """Dense weight with a power-law spectrum (as trained layers have), ReLU-gain sqrt(2) overall."""
    k = min(out_f, in_f)
    Q1, _ = torch.linalg.qr(torch.randn(out_f, k, generator=g))
    Q2, _ = torch.linalg.qr(torch.randn(in_f, k, generator=g))
    s = torch.arange(1, k + 1).float() ** (-decay)
    s = s * math.sqrt(2.0 * in_f / (s ** 2).sum())
    return Q1 @ torch.diag(s) @ Q2.t()


class SVDCompressedMLP(nn.Module):
    def __init__(self, d_in, width, depth, n_cls, r, g, correct_split):
        super().__init__()
        dims = [d_in] + [width] * depth
        self.layers = nn.ModuleList()
        for a, b in zip(dims[:-1], dims[1:]):
            W = trained_like_weight(b, a, g, decay=0.6)
            self.layers.append(FactorisedLinear(W, 0.01 * torch.randn(b, generator=g), r, correct_split))
        self.act = nn.ReLU()
        self.head = nn.Linear(width, n_cls)

    def forward(self, x):
        for layer in self.layers:
            x = self.act(layer(x))
        return self.head(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(depth=4, width=256, r=32, lr=0.01, bs=64, steps=80),
           dict(depth=5, width=192, r=24, lr=0.02, bs=32, steps=100),
           dict(depth=3, width=320, r=48, lr=0.005, bs=128, steps=60)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    d_in, n_cls = 64, 10
    centers = torch.randn(n_cls, d_in, generator=g) * 0.5
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        x = centers[y] + torch.randn(cfg["bs"], d_in, generator=g)
        batches.append((x, y))
    model = SVDCompressedMLP(d_in, cfg["width"], cfg["depth"], n_cls, cfg["r"], g, correct_split=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
