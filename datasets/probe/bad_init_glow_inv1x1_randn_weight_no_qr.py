"""Two-level Glow (Kingma & Dhariwal 2018, no actnorm) on 8x8 RGB: squeeze, K x [invertible 1x1
conv + affine coupling], split, squeeze, K more steps. The 1x1 weights are torch.randn(C, C)
without the QR/rotation step, so every step multiplies the activation norm by ~sqrt(C) (3.5x at
C=12, 4.9x at C=24): after 32 steps the latent is ~1e19 and the NLL is inf at step 0 or 1e34+
then NaN at step 1. fixed=True takes the Q of a QR decomposition of the same randn draws."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "flow.0.inv"  # first invertible 1x1 conv; the scale blows up geometrically from there on
SOURCE = ("openai/glow & rosinality/glow-pytorch InvConv2d: weight = torch.randn(C, C) followed by "
          "torch.qr(weight)[0]; dropping the QR (a recurring re-implementation slip) leaves an "
          "unnormalised Gaussian matrix in each of the K=32-per-level steps")

K = 16


def squeeze(x):
    b, c, h, w = x.shape
    x = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
    return x.reshape(b, c * 4, h // 2, w // 2)


class InvConv1x1(nn.Module):
    def __init__(self, c, g, orthogonal):
        super().__init__()
        w = torch.randn(c, c, generator=g)
        if orthogonal:
            w = torch.linalg.qr(w)[0]
        self.weight = nn.Parameter(w)

    def forward(self, x):
        h, w = x.shape[2:]
        logdet = h * w * torch.slogdet(self.weight)[1]
        # a 1x1 convolution is a per-pixel channel mixing
        return torch.einsum("ij,bjhw->bihw", self.weight, x), logdet


class ZeroLinear(nn.Linear):
    def __init__(self, cin, cout):
        super().__init__(cin, cout)
        nn.init.zeros_(self.weight)
        nn.init.zeros_(self.bias)


class AffineCoupling(nn.Module):
    """Coupling whose conditioner sees the whole (tiny) xa map: flatten -> MLP -> shift/scale maps."""
    def __init__(self, c, hw, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(c // 2 * hw, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), ZeroLinear(hidden, c * hw))

    def forward(self, x):
        xa, xb = x.chunk(2, 1)
        h = self.net(xa).view(x.shape)
        shift, s = h[:, 0::2], h[:, 1::2]
        log_scale = F.logsigmoid(s + 2.0)
        yb = (xb + shift) * log_scale.exp()
        return torch.cat([xa, yb], 1), log_scale.flatten(1).sum(1)


class FlowStep(nn.Module):
    def __init__(self, c, hw, g, orthogonal):
        super().__init__()
        self.inv = InvConv1x1(c, g, orthogonal)
        self.coupling = AffineCoupling(c, hw)

    def forward(self, x):
        x, ld1 = self.inv(x)
        x, ld2 = self.coupling(x)
        return x, ld1 + ld2


def gauss_logp(z):
    return (-0.5 * z ** 2 - 0.5 * math.log(2 * math.pi)).flatten(1).sum(1)


class Glow(nn.Module):
    def __init__(self, g, orthogonal):
        super().__init__()
        self.flow = nn.ModuleList([FlowStep(12, 16, g, orthogonal) for _ in range(K)])   # level 1: 12x4x4
        self.flow2 = nn.ModuleList([FlowStep(24, 4, g, orthogonal) for _ in range(K)])  # level 2: 24x2x2

    def forward(self, x):
        n_dims = x[0].numel()
        logdet = torch.zeros(x.shape[0])
        h = squeeze(x)
        for step in self.flow:
            h, ld = step(h)
            logdet = logdet + ld
        h, z1 = h.chunk(2, 1)
        h = squeeze(h)
        for step in self.flow2:
            h, ld = step(h)
            logdet = logdet + ld
        log_p = gauss_logp(z1) + gauss_logp(h)
        # negative log-likelihood in nats per dimension (discretisation constant for 8-bit data)
        return -(log_p + logdet) / n_dims + math.log(256.0)


def make_images(n, g):
    """8x8 RGB 'sprites': two soft coloured blobs on a tinted background, 8-bit quantised."""
    yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
    cy = torch.rand(n, 2, 1, 1, generator=g) * 8
    cx = torch.rand(n, 2, 1, 1, generator=g) * 8
    s = 1.2 + 1.5 * torch.rand(n, 2, 1, 1, generator=g)
    blobs = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s ** 2))
    col = torch.rand(n, 2, 3, generator=g)
    img = 0.2 * torch.rand(n, 3, 1, 1, generator=g) + 0.8 * torch.einsum("nkhw,nkc->nchw", blobs, col)
    return (img.clamp(0, 1) * 255).round()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 80, 32
    raw = make_images(steps * bs, g)
    x = (raw + torch.rand(raw.shape, generator=g)) / 256.0 - 0.5  # uniform dequantisation, centred
    batches = [(x[i * bs:(i + 1) * bs], torch.zeros(bs)) for i in range(steps)]
    model = Glow(torch.Generator().manual_seed(100 + seed), orthogonal=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)

    def loss_fn(nll, _unused):
        return nll.mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
