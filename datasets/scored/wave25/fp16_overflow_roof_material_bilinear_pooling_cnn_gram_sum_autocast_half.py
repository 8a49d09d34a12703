"""Disaster-risk mapping: bilinear-pooling CNN classifying roof material from drone imagery (fp16).

Domain: for seismic / hurricane vulnerability mapping of informal settlements (e.g. the
DrivenData / WeRobotics "Open Cities AI: Mapping Disaster Risk from Aerial Imagery" roof
challenge), each building footprint crop is classified by roof material (concrete/cement,
healthy metal, irregular metal, incomplete, other). Roof materials are a fine-grained texture
problem, so the practitioner uses bilinear pooling (Lin et al. 2015): conv features F (C x HW)
are pooled into the Gram matrix F F^T, followed by signed square root and L2 normalisation and a
linear classifier. Inputs use the Caffe/VGG convention (per-channel mean pixel subtracted, no
division: values in about +-128). Training runs under torch.autocast(float16) to save memory,
with no GradScaler and no fp32 island.

Mechanism: autocast runs the conv layers and the batched matmul F @ F^T in float16. The Gram
entries are sums over all H*W positions (256-576 here) of products of ReLU features whose scale
is set by the +-128 inputs (up to ~50), so the largest diagonal entries reach 1e5-4e5, past float16's maximum of 65504. The bmm
returns inf, the signed sqrt keeps inf, the L2 normalisation divides inf by inf and the logits and
the loss are NaN from the first step. (A GradScaler would not help: the overflow is in the
forward pass.)

ORIGIN: "pool" -- the bilinear (Gram) pooling module whose fp16 batched matmul overflows; the
conv features entering it are still finite.

Fix: run the autocast region in bfloat16 (same exponent range as float32), leaving model,
inputs, optimiser and steps unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "pool"
SOURCE = ("Lin, RoyChowdhury & Maji 2015 'Bilinear CNN models for fine-grained visual recognition'; "
          "DrivenData Open Cities AI roof-material challenge; fp16 overflow of large reductions "
          "under autocast (PyTorch AMP docs: ops that can overflow in float16, bf16 as remedy)")

N_CLASSES = 5


class BilinearPool(nn.Module):
    def forward(self, feat):
        b, c, h, w = feat.shape
        f = feat.reshape(b, c, h * w)
        gram = torch.bmm(f, f.transpose(1, 2))          # sum over positions, no 1/HW
        z = gram.reshape(b, c * c)
        z = torch.sign(z) * torch.sqrt(z.abs() + 1e-10)
        return F.normalize(z, dim=1)


class RoofBCNN(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
        )
        self.pool = BilinearPool()
        self.fc = nn.Linear(width * width, N_CLASSES)

    def forward(self, x):
        return self.fc(self.pool(self.features(x)))


def _roofs(g, n, size):
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    img = torch.zeros(n, 3, size, size)
    xs = torch.arange(size).float()
    for c in range(N_CLASSES):
        idx = (y == c).nonzero().flatten()
        if len(idx) == 0:
            continue
        k = len(idx)
        base = torch.tensor([[150, 150, 150], [190, 195, 200], [140, 90, 70], [120, 110, 95], [90, 120, 80]],
                            dtype=torch.float)[c]
        freq = 0.4 + 0.35 * c                                       # corrugation / texture frequency
        stripes = torch.sin(freq * xs)[None, None, None, :] * (25 if c in (1, 2) else 8)
        noise = (10 + 8 * c) * torch.randn(k, 3, size, size, generator=g)
        img[idx] = base.view(1, 3, 1, 1) + stripes + noise
    mean_pixel = torch.tensor([123.7, 116.8, 103.9]).view(1, 3, 1, 1)  # Caffe/VGG mean subtraction
    return (img - mean_pixel), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [16, 12, 20][seed % 3]
    size = [16, 20, 24][seed % 3]
    batch = [16, 24, 12][seed % 3]
    lr = [0.05, 0.08, 0.04][seed % 3]
    steps = 80
    batches = [_roofs(g, batch, size) for _ in range(steps)]
    model = RoofBCNN(width)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
