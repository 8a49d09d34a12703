"""LSQ 4-bit quantised CNN whose learned step sizes get the raw (unscaled) gradient.

Mechanism: Learned Step Size Quantization (Esser et al., ICLR 2020) quantises weights and
activations with a learnable step size s: q = round(clamp(v / s, -Qn, Qp)) * s, with a
straight-through estimator for round.  The step-size gradient is a SUM over every element
quantised with that s (all weights of a layer, or all activations of a batch), so the paper
multiplies it by g = 1 / sqrt(N * Qp) (the ``grad_scale`` trick) to make the step-size
update the same relative size as a weight update.  This implementation omits
``grad_scale``: with the SGD lr that is right for the weights, every step size gets an
update ~sqrt(N * Qp) (10^2-10^3) times too large, an update/value ratio of order 1 or more
per step.  The weight step sizes (init ~0.02-0.03) are thrown around by several times their
own value, cross zero (the quantised weights flip sign) and then run away to 1e5-1e14
(every weight rounds to 0); activation step sizes are pushed negative (every activation
quantises to 0).  The quantised network's features are scrambled step after step and, after
a brief early dip, the loss returns to chance and stays there.

ORIGIN: None.  Every LSQ quantiser in every layer receives the oversized step-size update at
once; no single module starts it.

Fix: apply LSQ's gradient scale g = 1/sqrt(N * Qp) to the step sizes, i.e. give the step
sizes the effective learning rate lr * g they were meant to have; nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("LSQ: Learned Step Size Quantization (Esser et al., ICLR 2020), grad_scale(s, 1/sqrt(N*Qp)); "
          "re-implementations (e.g. LSQ-Net ports) whose issue threads report step sizes going negative / "
          "loss not decreasing when grad_scale is dropped")


def grad_scale(x, scale):
    return (x - x * scale).detach() + x * scale


def round_pass(x):
    return (x.round() - x).detach() + x


class LSQQuantizer(nn.Module):
    def __init__(self, bits, signed, use_grad_scale):
        super().__init__()
        self.Qn = 2 ** (bits - 1) if signed else 0
        self.Qp = 2 ** (bits - 1) - 1 if signed else 2 ** bits - 1
        self.use_grad_scale = use_grad_scale
        self.step = nn.Parameter(torch.tensor(1.0))

    def init_from(self, v):
        with torch.no_grad():
            self.step.fill_(2 * v.abs().mean().item() / math.sqrt(self.Qp))

    def forward(self, v):
        s = self.step
        if self.use_grad_scale:
            s = grad_scale(s, 1.0 / math.sqrt(v.numel() * self.Qp))
        return round_pass((v / s).clamp(-self.Qn, self.Qp)) * s


class QConvBNReLU(nn.Module):
    def __init__(self, cin, cout, stride, bits, use_gs):
        super().__init__()
        self.act_q = LSQQuantizer(bits, signed=False, use_grad_scale=use_gs)   # input activations (post-ReLU)
        self.conv = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.w_q = LSQQuantizer(bits, signed=True, use_grad_scale=use_gs)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.w_q.init_from(self.conv.weight)

    def forward(self, x):
        x = self.act_q(x)
        w = self.w_q(self.conv.weight)
        return self.relu(self.bn(F.conv2d(x, w, None, self.conv.stride, self.conv.padding)))


class LSQConvNet(nn.Module):
    def __init__(self, w, n_cls, bits, use_gs):
        super().__init__()
        # first and last layers stay full precision (standard LSQ practice)
        self.stem = nn.Sequential(nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU())
        self.body = nn.Sequential(QConvBNReLU(w, w, 1, bits, use_gs), QConvBNReLU(w, 2 * w, 2, bits, use_gs),
                                  QConvBNReLU(2 * w, 2 * w, 1, bits, use_gs), QConvBNReLU(2 * w, 4 * w, 2, bits, use_gs))
        self.fc = nn.Linear(4 * w, n_cls)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(self.stem(x)), 1).flatten(1))

    @torch.no_grad()
    def calibrate(self, x):
        """LSQ init of activation step sizes from one batch: s = 2 <|v|> / sqrt(Qp)."""
        h = self.stem(x)
        for blk in self.body:
            blk.act_q.init_from(h)
            h = blk(h)


def make_images(y, g, n_cls):
    b = y.shape[0]
    coords = torch.linspace(-1, 1, 16)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = (y % 5).float() * math.pi / 5 + 0.08 * torch.randn(b, generator=g)
    freq = 2.5 + 3.0 * (y // 5).float()
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    base = torch.sin(freq[:, None, None] * proj + 6.28 * torch.rand(b, 1, 1, generator=g))
    img = base[:, None] * (1.0 + 0.3 * torch.randn(b, 3, 1, 1, generator=g)) + 0.5 * torch.randn(b, 3, 16, 16, generator=g)
    return (img - img.mean()) / img.std()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=16, bs=32, lr=0.02, bits=4, steps=80),
           dict(w=12, bs=48, lr=0.01, bits=3, steps=70),
           dict(w=16, bs=24, lr=0.03, bits=4, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8080 + seed)
    n_cls = 10
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        batches.append((make_images(y, g, n_cls), y))
    model = LSQConvNet(cfg["w"], n_cls, cfg["bits"], use_gs=fixed)
    model.calibrate(batches[0][0])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
