"""Chebyshev KAN (ChebyKAN) regressor whose hidden tanh squashing saturates.

Mechanism: each ChebyKAN layer maps its input into [-1, 1] with tanh and then evaluates
Chebyshev polynomials T_0..T_5 there (recurrence form), summing d_in*(degree+1) learnable
coefficients per output. Nothing bounds a layer's output, so after a few Adam steps
the second layer's outputs grow to many units and the tanh at the entrance of the third
layer saturates (>90% of units past |0.99| by step ~40). Its derivative 1 - tanh^2 goes to 0, the
polynomial basis sees only +-1 and both the gradient to earlier layers and the information
about the input vanish: the loss stalls above its early minimum.
ORIGIN: layers.2.squash, the tanh that saturates first (layers.0/1 tanh stay unsaturated).
fixed=True: LayerNorm between KAN layers, as the ChebyKAN README recommends (same lr, data, init).
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "saturation"
ORIGIN = "layers.2.squash"
SOURCE = 'ChebyKAN (SynodicMonth/ChebyKAN) README: use LayerNorm between ChebyKAN layers to avoid gradient vanishing caused by tanh'

class ChebyKANLayer(nn.Module):
    def __init__(self, d_in, d_out, degree):
        super().__init__()
        self.d_in, self.d_out, self.degree = d_in, d_out, degree
        self.coeffs = nn.Parameter(torch.empty(d_in, d_out, degree + 1))
        nn.init.normal_(self.coeffs, 0.0, 1.0 / (d_in * (degree + 1)))
        self.squash = nn.Tanh()
    def forward(self, x):
        x = self.squash(x)
        T = [torch.ones_like(x), x]
        for _ in range(2, self.degree + 1):
            T.append(2 * x * T[-1] - T[-2])
        T = torch.stack(T, -1)
        return torch.einsum("bid,iod->bo", T, self.coeffs)

class ChebyKAN(nn.Module):
    def __init__(self, dims, degree, norm):
        super().__init__()
        self.layers = nn.ModuleList([ChebyKANLayer(a, b, degree) for a, b in zip(dims[:-1], dims[1:])])
        self.norms = nn.ModuleList([nn.LayerNorm(d) if norm else nn.Identity() for d in dims[1:-1]])
    def forward(self, x):
        for i, l in enumerate(self.layers):
            x = l(x)
            if i < len(self.norms):
                x = self.norms[i](x)
        return x.squeeze(-1)

def build(seed, fixed=False, lr=1e-2, steps=200):
    g = torch.Generator().manual_seed(seed)
    d = 16
    W = torch.randn(d, 8, generator=g) / d ** 0.5
    def make(n):
        x = torch.randn(n, d, generator=g)
        h = x @ W
        y = torch.sin(h[:, 0]) * h[:, 1] + torch.cos(h[:, 2] - h[:, 3]) + 0.5 * h[:, 4] * h[:, 5]
        return x, y
    xs, ys = make(steps * 64)
    ys = (ys - ys.mean()) / ys.std()
    batches = [(xs[i*64:(i+1)*64], ys[i*64:(i+1)*64]) for i in range(steps)]
    torch.manual_seed(seed)
    model = ChebyKAN([d, 64, 64, 1], 5, norm=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps, amp_dtype=None, scaler=None)
