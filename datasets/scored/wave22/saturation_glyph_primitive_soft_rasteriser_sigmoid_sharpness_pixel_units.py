"""Vector-glyph reconstruction through a differentiable soft rasteriser (Im2Vec /
DiffVG-style "raster loss" training): an encoder MLP reads the glyph bitmap and
predicts the parameters of K disc primitives; each primitive is rendered as
coverage = sigmoid(k * (r - d(pixel))), the union is compared with the bitmap by
MSE, and the whole thing is trained with SGD + momentum.

Mechanism: the edge softness was copied from SoftRas (sigma = 1e-4, i.e. k = 1/sigma
= 1e4-2e4), where sigma is meant for *squared* distances, but here it is applied to
plain distances in normalised [-1, 1] canvas units (pixel spacing ~0.1). The sigmoid
argument k*(r - d) is then in the hundreds or thousands for every pixel: coverage
is saturated at exactly 0 or 1 over the whole canvas and its derivative
k*s*(1-s) is 0, except for the rare pixel that happens to fall within ~1e-3 of an
edge, where it is enormous. Primitive positions and radii get no useful gradient
(zero almost always, a huge random kick now and then) and the raster loss never
goes below its initial level -> stall.

ORIGIN: ``render`` - the soft-rasteriser module whose sigmoid units saturate.

Fix: edge sharpness in canvas units (k = 6-10, a 2-3 pixel soft edge); encoder,
data, optimizer and lr unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "render"
SOURCE = ("SoftRas / DiffVG / Im2Vec soft rasterisers (coverage = sigmoid(distance / "
          "sigma)); issues 'gradients are zero unless sigma is increased', 'shapes do "
          "not move' when sigma is too small for the coordinate units")


class SoftRaster(nn.Module):
    def __init__(self, size, sharpness):
        super().__init__()
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size),
                                indexing="ij")
        self.register_buffer("grid", torch.stack([xs, ys], dim=-1).view(1, 1, size * size, 2))
        self.k = sharpness
        self.size = size

    def forward(self, centres, radii):
        # centres (B, K, 2), radii (B, K)
        d = (self.grid - centres.unsqueeze(2)).norm(dim=-1)            # (B, K, P)
        cov = torch.sigmoid(self.k * (radii.unsqueeze(-1) - d))       # (B, K, P)
        union = 1 - torch.prod(1 - cov, dim=1)                        # (B, P)
        return union.view(-1, 1, self.size, self.size)


class GlyphVectoriser(nn.Module):
    def __init__(self, size, n_prims, width, sharpness):
        super().__init__()
        self.n = n_prims
        self.enc = nn.Sequential(nn.Flatten(), nn.Linear(size * size, width), nn.ReLU(),
                                 nn.Linear(width, width), nn.ReLU(),
                                 nn.Linear(width, n_prims * 3))
        self.render = SoftRaster(size, sharpness)

    def forward(self, bitmap):
        p = self.enc(bitmap).view(-1, self.n, 3)
        centres = torch.tanh(p[..., :2]) * 0.9
        radii = 0.1 + 0.3 * torch.sigmoid(p[..., 2])
        return self.render(centres, radii)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11000 + seed)
    size = [20, 16, 24][seed % 3]
    n_prims = [3, 4, 3][seed % 3]
    width = [64, 96, 64][seed % 3]
    bs = [16, 12, 16][seed % 3]
    lr = [0.5, 0.4, 0.5][seed % 3]
    k = ([8.0, 6.0, 10.0] if fixed else [1e4, 2e4, 1e4])[seed % 3]
    steps = 150
    model = GlyphVectoriser(size, n_prims, width, k)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    # "glyphs": unions of a few blobs (dots / strokes of a stylised font), rendered
    # with a fixed anti-aliased edge
    ref = SoftRaster(size, 12.0)
    batches = []
    for _ in range(steps):
        c = (torch.rand(bs, n_prims, 2, generator=g) * 2 - 1) * 0.6
        r = torch.rand(bs, n_prims, generator=g) * 0.25 + 0.15
        with torch.no_grad():
            img = ref(c, r)
        batches.append((img, img))

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
