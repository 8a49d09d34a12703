"""Quantisation-aware fine-tuning, on the deployment sensor's data, of a pre-trained
BN-folded CNN for an integer-only micro-controller (int8 per-channel fake-quant weights,
uint8 fake-quant activations, straight-through estimator), cross-entropy, SGD+momentum.

Mechanism: QAT is meant to be a short fine-tune from the float checkpoint at about 1% of the
original learning rate, but the script reused the from-scratch recipe (lr 0.2-0.3, momentum
0.9).  The BN has been folded away for integer inference, so nothing rescales the conv
outputs: the first updates change the weights by a large fraction of their own size
(update/weight ratios ~0.1-1 instead of ~1e-3), the loss jumps above its starting value,
the activations overshoot and the following oversized steps throw the network into a
constant-prediction state; the loss then sits at ~ln(10) for the rest of the run (a stall
at or above the starting loss; no value becomes non-finite).

ORIGIN: None -- lr_too_high; every layer receives oversized updates.

Fix: the QAT fine-tuning learning rate (lr/100); same model, quantisers, data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("PyTorch QAT tutorial / Jacob et al. 2018 integer-only inference and Krishnamoorthi "
          "2018 whitepaper (QAT fine-tune at ~1% of the original lr); known pattern: reusing "
          "the from-scratch lr for QAT on a BN-folded net diverges")


def _fq_per_channel(w):
    # symmetric int8 per-output-channel weight fake-quant with STE
    scale = w.detach().abs().amax(dim=tuple(range(1, w.dim())), keepdim=True).clamp_min(1e-8) / 127
    q = torch.clamp(torch.round(w / scale), -127, 127) * scale
    return w + (q - w).detach()


class FQAct(nn.Module):
    # uint8 fake-quant of post-ReLU activations, range tracked by an EMA observer
    def __init__(self):
        super().__init__()
        self.register_buffer("max_val", torch.tensor(1.0))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.max_val.mul_(0.9).add_(0.1 * x.detach().max().clamp_min(1e-3))
        scale = self.max_val / 255
        q = torch.clamp(torch.round(x / scale), 0, 255) * scale
        return x + (q - x).detach()


class QConv(nn.Conv2d):
    def forward(self, x):
        return F.conv2d(x, _fq_per_channel(self.weight), self.bias, self.stride, self.padding)


class QLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, _fq_per_channel(self.weight), self.bias)


class TinyCNN(nn.Module):
    def __init__(self, c, n_cls, conv=nn.Conv2d, lin=nn.Linear, act_q=False):
        super().__init__()
        self.c1, self.c2, self.c3 = conv(1, c, 3, padding=1), conv(c, 2 * c, 3, padding=1), \
            conv(2 * c, 2 * c, 3, padding=1)
        self.a1, self.a2, self.a3 = (FQAct() if act_q else nn.Identity() for _ in range(3))
        self.fc = lin(2 * c, n_cls)

    def forward(self, x):
        x = F.max_pool2d(self.a1(F.relu(self.c1(x))), 2)
        x = F.max_pool2d(self.a2(F.relu(self.c2(x))), 2)
        x = self.a3(F.relu(self.c3(x)))
        return self.fc(x.mean(dim=(2, 3)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(10000 + seed)
    n_cls, H = 10, 16
    c = [16, 12, 20][seed % 3]
    lr = [0.3, 0.2, 0.25][seed % 3]
    if fixed:
        lr = lr / 100
    bs = [64, 96, 48][seed % 3]
    steps = 100

    src = F.avg_pool2d(torch.randn(n_cls, 1, H, H, generator=g), 3, 1, 1) * 3.0
    # deployment sensor: same classes, partly different appearance -> QAT fine-tune on its data
    tgt = 0.6 * src + 0.8 * F.avg_pool2d(torch.randn(n_cls, 1, H, H, generator=g), 3, 1, 1) * 3.0

    def sample(n, protos=tgt):
        y = torch.randint(0, n_cls, (n,), generator=g)
        x = protos[y] + 0.8 * torch.randn(n, 1, H, H, generator=g)
        return x, y

    # float model "pre-trained" with BN, then BN folded into the convs (deterministic, cheap)
    torch.manual_seed(seed)
    fp = TinyCNN(c, n_cls)
    popt = torch.optim.Adam(fp.parameters(), lr=3e-3)
    for _ in range(60):
        x, y = sample(128, src)
        popt.zero_grad()
        F.cross_entropy(fp(x), y).backward()
        popt.step()

    model = TinyCNN(c, n_cls, conv=QConv, lin=QLinear, act_q=True)
    model.load_state_dict(fp.state_dict(), strict=False)
    with torch.no_grad():                      # calibrate the activation observers once
        x, _ = sample(256)
        h1 = F.relu(model.c1(x)); model.a1.max_val.fill_(float(h1.max()))
        h2 = F.relu(model.c2(F.max_pool2d(h1, 2))); model.a2.max_val.fill_(float(h2.max()))
        h3 = F.relu(model.c3(F.max_pool2d(h2, 2))); model.a3.max_val.fill_(float(h3.max()))

    batches = [sample(bs) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
