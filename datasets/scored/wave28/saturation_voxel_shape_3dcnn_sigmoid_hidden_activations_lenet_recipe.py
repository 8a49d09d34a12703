"""3D voxel shape classifier (a VoxNet/LeNet-style 3D CNN on 12^3 occupancy grids) written with
sigmoid hidden activations, as in the LeNet-5 teaching recipe it was adapted from.

Mechanism: every conv and hidden linear layer is followed by a sigmoid.  The sigmoid's
derivative is at most 0.25 and its outputs are all positive with mean ~0.5, so each layer
passes on a near-constant, half-saturated signal plus a small input-dependent part, and the
backward signal shrinks by >= 4x per layer.  With two sigmoid 3D conv layers, a sigmoid FC and
PyTorch's default init, the classifier sees almost the same feature vector for every shape and
the gradient reaching the convs is one to two orders of magnitude too small for SGD; the cross-entropy
sits at about log(n_classes) for the whole run (a stall; nothing non-finite).  (The LeNet
recipe gets away with it only with lr ~0.9 and many epochs.)

ORIGIN: "features.1", the first sigmoid (after the first 3D conv): the saturating unit type
starts there and every later sigmoid compounds the gradient loss.

Fix: ReLU instead of sigmoid for the hidden activations (a non-saturating activation); same
layers, init, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "features.1"
SOURCE = ("LeCun et al. 1998 LeNet-5 with sigmoid activations as taught in d2l.ai ch. 7.6 "
          "('sigmoid LeNet needs a large lr'); Maturana & Scherer, VoxNet (IROS 2015) voxel 3D "
          "CNN; Glorot & Bengio 2010 on sigmoid saturation")


class Voxel3DCNN(nn.Module):
    def __init__(self, width, depth, n_cls, act):
        super().__init__()
        layers, cin = [], 1
        for i in range(depth):
            layers += [nn.Conv3d(cin, width, 3, padding=1), act()]
            if i % 2 == 1:
                layers.append(nn.MaxPool3d(2))
            cin = width
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.AdaptiveAvgPool3d(2), nn.Flatten(),
                                        nn.Linear(width * 8, 64), act(), nn.Linear(64, n_cls))

    def forward(self, vox):
        return self.classifier(self.features(vox))


def _voxels(g, n, size, n_cls):
    y = torch.randint(0, n_cls, (n,), generator=g)
    c = torch.linspace(-1, 1, size)
    zz, yy, xx = torch.meshgrid(c, c, c, indexing="ij")
    grids = []
    for i in range(n):
        s = 0.45 + 0.35 * torch.rand(3, generator=g)
        o = (torch.rand(3, generator=g) * 2 - 1) * 0.2
        X, Y, Z = (xx - o[0]) / s[0], (yy - o[1]) / s[1], (zz - o[2]) / s[2]
        k = int(y[i])
        if k == 0:
            occ = X ** 2 + Y ** 2 + Z ** 2 <= 1                                   # ellipsoid
        elif k == 1:
            occ = (X.abs() <= 1) & (Y.abs() <= 1) & (Z.abs() <= 1)                # box
        elif k == 2:
            occ = (X ** 2 + Y ** 2 <= 1) & (Z.abs() <= 1)                         # cylinder
        else:
            occ = (X ** 2 + Y ** 2 <= ((1 - Z) / 2) ** 2) & (Z.abs() <= 1)        # cone
        v = occ.float()
        v = torch.where(torch.rand(v.shape, generator=g) < 0.03, 1 - v, v)      # sensor noise
        grids.append(v)
    return torch.stack(grids)[:, None], y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [8, 12, 16][seed % 3]
    depth = [2, 2, 2][seed % 3]
    batch = [16, 12, 20][seed % 3]
    lr = [0.1, 0.08, 0.12][seed % 3]
    steps, size, n_cls = 150, 12, 4
    model = Voxel3DCNN(width, depth, n_cls, nn.ReLU if fixed else nn.Sigmoid)
    batches = [_voxels(g, batch, size, n_cls) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": F.cross_entropy, "batches": batches,
            "steps": steps}
