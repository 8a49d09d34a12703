"""Texture / material recognition with a Gram-matrix descriptor (the texture statistic of
Gatys et al., used as an orderless pooling as in bilinear-CNN and Deep-TEN): a small conv
backbone (BN + ReLU) produces 16 feature maps on a 16x16 grid, the descriptor is their Gram
matrix, a linear layer with a tanh squashes it into a 32-d texture embedding and a linear
classifier predicts the material, trained with momentum SGD. The Gram matrix should be
divided by the number of positions (H*W = 256); here it is the raw sum over 256 positions of
products of non-negative BN-ReLU activations, i.e. entries of tens to hundreds (median ~40).
The embedding layer's pre-activations are then tens in magnitude (median ~27), 95% of the tanh
units of embed.act are past 0.99 at step 0 (85% exactly +-1.0 in fp32) and all of them by the
end, their derivative is zero, the classifier gets a nearly constant code and the loss stays at
or above chance (ln 6) for the whole run, no NaN. Dividing the Gram by H*W (smaller pre-activations) trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "embed.act"
SOURCE = ("Gatys et al. 2015 Gram normalisation 1/(H*W); bilinear CNN (Lin et al. 2015) and "
          "Deep-TEN texture descriptors; tanh saturation by un-normalised pooled statistics")

N_CLS = 6


class GramTextureNet(nn.Module):
    def __init__(self, normalise=False):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        )
        self.normalise = normalise
        self.embed = nn.Sequential()
        self.embed.add_module("fc", nn.Linear(16 * 16, 32))
        self.embed.add_module("act", nn.Tanh())
        self.classifier = nn.Linear(32, N_CLS)

    def forward(self, x):
        f = self.backbone(x).flatten(2)                       # B, C, HW
        gram = f @ f.transpose(1, 2)                          # B, C, C  (sum over positions)
        if self.normalise:
            gram = gram / f.shape[-1]
        return self.classifier(self.embed(gram.flatten(1)))


def _textures(g, n=32, hw=16):
    yy, xx = torch.meshgrid(torch.arange(hw, dtype=torch.float32), torch.arange(hw, dtype=torch.float32), indexing="ij")
    y = torch.randint(0, N_CLS, (n,), generator=g)
    imgs = []
    for i in range(n):
        c = int(y[i])
        ph = float(torch.rand(1, generator=g)) * 6.28
        freq = 0.6 + 0.5 * (c % 3)
        if c < 3:
            t = torch.sin(freq * xx + ph)                     # vertical stripes, 3 frequencies
        else:
            t = torch.sin(freq * xx + ph) * torch.sin(freq * yy + ph)   # checker-like, 3 frequencies
        imgs.append(0.5 + 0.4 * t + 0.15 * torch.randn(hw, hw, generator=g))
    return torch.stack(imgs)[:, None], y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GramTextureNet(normalise=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    steps = 150
    batches = [_textures(g) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
