"""Deep CORAL unsupervised domain adaptation (Sun & Saenko 2016) trained with fp16 autocast;
the CORAL covariance-alignment term is computed in half precision.

Mechanism: the model embeds a labelled source batch and an unlabelled target batch with a
shared MLP feature extractor (ReLU bottleneck of width d), classifies the source batch and
computes the CORAL loss inside a `CoralLoss` submodule, written like the widely copied
PyTorch port: un-normalised covariances xm.T @ xm (sums over the batch, no 1/(n-1)) and
mean((xc - xct) * (xc - xct)) / (4 d^2).  Under torch.autocast(float16) the bottleneck
features are half, so the covariance matmuls, their difference and its elementwise square
all run in fp16.  The target domain (sensor gain/offset drift) has a much larger feature
scale; as classification training sharpens the features the covariance gap grows, and once
an entry of xc - xct passes ~256 its square passes 65504: the CORAL term and the loss are inf
from that step on (the gradients, 2 * (xc - xct), stay finite, so the run keeps going with an
infinite loss).  A GradScaler cannot help: the overflow is in the forward pass.

ORIGIN: `coral`, the CoralLoss module whose half-precision square overflows first.

Fix: compute the CORAL term in float32 (features cast with .float() and autocast disabled
inside CoralLoss), the usual "keep statistics/reductions in fp32" AMP rule.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "coral"
SOURCE = ("Sun & Saenko 2016 'Deep CORAL' (||Cs - Ct||_F^2 / 4d^2); the popular PyTorch port "
          "(SSARCandy/DeepCORAL CORAL() with un-normalised xm.t() @ xm); PyTorch AMP notes on "
          "float16 range; DA repo issues 'CORAL loss becomes inf with mixed precision'")


class CoralLoss(nn.Module):
    def __init__(self, fp32: bool):
        super().__init__()
        self.fp32 = fp32

    def _coral(self, source, target):
        # the widely copied PyTorch port: un-normalised covariances, mean over entries
        d = source.shape[1]
        xm = torch.mean(source, 0, keepdim=True) - source
        xc = xm.t() @ xm
        xmt = torch.mean(target, 0, keepdim=True) - target
        xct = xmt.t() @ xmt
        loss = torch.mean(torch.mul((xc - xct), (xc - xct)))
        return loss / (4 * d * d)

    def forward(self, fs, ft):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._coral(fs.float(), ft.float())
        return self._coral(fs, ft)


class DeepCORAL(nn.Module):
    def __init__(self, d_in, hidden, d_feat, n_cls, fp32_coral):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                      nn.Linear(hidden, d_feat), nn.ReLU())
        self.classifier = nn.Linear(d_feat, n_cls)
        self.coral = CoralLoss(fp32_coral)

    def forward(self, xs, xt):
        fs, ft = self.features(xs), self.features(xt)
        return self.classifier(fs), self.coral(fs, ft)


def make_loss(lam):
    def loss_fn(out, ys):
        logits, coral = out
        return F.cross_entropy(logits, ys) + lam * coral
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d_in=32, hidden=128, d_feat=128, bs=64, steps=80, lr=1e-3, lam=1.0),
           dict(d_in=24, hidden=96, d_feat=192, bs=48, steps=70, lr=2e-3, lam=0.5),
           dict(d_in=40, hidden=160, d_feat=256, bs=96, steps=60, lr=1e-3, lam=1.0)][seed % 3]
    g = torch.Generator().manual_seed(2024 + seed)
    d_in, n_cls = cfg["d_in"], 6
    centers = torch.randn(n_cls, d_in, generator=g) * 1.2
    gain = 1.5 + 2.5 * torch.rand(d_in, generator=g)           # target sensor gain drift
    offset = 2.0 * torch.randn(d_in, generator=g)              # and offset drift
    batches = []
    for _ in range(cfg["steps"]):
        ys = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        xs = centers[ys] + torch.randn(cfg["bs"], d_in, generator=g)
        yt = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        xt = (centers[yt] + torch.randn(cfg["bs"], d_in, generator=g)) * gain + offset
        batches.append(((xs, xt), ys))

    torch.manual_seed(seed)
    model = DeepCORAL(d_in, cfg["hidden"], cfg["d_feat"], n_cls, fp32_coral=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"] * 10, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(cfg["lam"]), batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16)
