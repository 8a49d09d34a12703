"""A small V-Net-style 3D segmentation network (plain conv3d stack, no normalisation, residual-free
as in early medical-imaging ports) is initialised with a Caffe-style "gaussian std=0.01" filler on
every conv.  With fan-in 27*C the per-layer gain is ~0.01*sqrt(27*C) << 1, so the activation scale
shrinks geometrically through the eight layers: the logits are ~0 for every voxel, the foreground
BCE sits at ln 2 and the backward signal reaching the filters is vanishingly small, so SGD makes no
visible progress and the loss plateaus without ever producing a non-finite value.  The fix is
Kaiming (He) initialisation of the convolutions."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("Caffe/V-Net prototxt 'weight_filler {type: gaussian std: 0.01}' carried into PyTorch 3D "
          "segmentation ports; forum reports of 3D U-Nets stuck at BCE=0.693 fixed by He init")


class VNetSmall(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv3d(1, c, 3, padding=1), nn.PReLU(c),
            nn.Conv3d(c, c, 3, padding=1), nn.PReLU(c),
            nn.Conv3d(c, c, 3, padding=1), nn.PReLU(c),
            nn.Conv3d(c, c, 3, padding=1), nn.PReLU(c),
        )
        self.decoder = nn.Sequential(
            nn.Conv3d(c, c, 3, padding=1), nn.PReLU(c),
            nn.Conv3d(c, c, 3, padding=1), nn.PReLU(c),
            nn.Conv3d(c, c, 3, padding=1), nn.PReLU(c),
        )
        self.head = nn.Conv3d(c, 1, 1)

    def forward(self, x):
        return self.head(self.decoder(self.encoder(x))).squeeze(1)


def _volumes(g, n, s=12):
    # synthetic CT patches: soft "organ" blobs of higher intensity on a noisy background,
    # already windowed/standardised; label = organ voxels
    zz, yy, xx = torch.meshgrid(torch.arange(s), torch.arange(s), torch.arange(s), indexing="ij")
    vols, labs = [], []
    for _ in range(n):
        c = torch.rand(3, generator=g) * (s - 4) + 2
        r = 2.5 + 2.0 * torch.rand(1, generator=g)
        d = ((zz - c[0]) ** 2 + (yy - c[1]) ** 2 + (xx - c[2]) ** 2).float().sqrt()
        lab = (d < r).float()
        v = 1.6 * lab - 0.8 + 0.35 * torch.randn(s, s, s, generator=g)
        vols.append(v); labs.append(lab)
    return torch.stack(vols).unsqueeze(1), torch.stack(labs)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = VNetSmall()
    for m in model.modules():
        if isinstance(m, nn.Conv3d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, a=0.25, nonlinearity="leaky_relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)   # Caffe gaussian filler
            nn.init.zeros_(m.bias)
    pool = [_volumes(g, 4) for _ in range(10)]
    steps = 80
    batches = [pool[i % len(pool)] for i in range(steps)]
    # class-balanced BCE (organ voxels are rare): pos_weight = #background / #foreground
    fg = torch.cat([y for _, y in pool]).mean()
    pos_weight = (1 - fg) / fg

    def loss_fn(out, y):
        return F.binary_cross_entropy_with_logits(out, y, pos_weight=pos_weight)

    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
