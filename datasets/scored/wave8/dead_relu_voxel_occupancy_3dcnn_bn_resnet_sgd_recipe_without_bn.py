"""3-D CNN shape classifier on binary occupancy grids (ModelNet-style voxelisations: every input
value is 0 or 1, never negative, never centred). The solver was copied from a BatchNorm ResNet
recipe, SGD lr=0.1 with momentum 0.9 and Nesterov, but this small conv3d-ReLU stack has no
normalisation layer. Because the inputs are all non-negative, every weight of a first-layer filter
receives a gradient of the same sign; the first large momentum steps push whole filters (and their
biases) negative, after which their pre-activations are negative at every voxel of every grid. The
first layer's ReLUs die one filter after another, no gradient reaches them again, the deeper layers
starve, and the loss flattens at the class-prior level without ever becoming non-finite.
Fix: a learning rate suited to a network without BN (0.01)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "body.0"
SOURCE = ("VoxNet / 3D ShapeNets voxel classifiers; 'training loss stuck at ln(num_classes), all "
          "activations zero' reports after reusing the BN-ResNet SGD lr=0.1 recipe on a network "
          "without BatchNorm (cs231n: dying ReLU with a too-high learning rate and non-centred inputs)")

N_CLS = 4


class VoxCNN(nn.Module):
    def __init__(self, ch=12):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv3d(1, ch, 3, padding=1), nn.ReLU(),
            nn.MaxPool3d(2),
            nn.Conv3d(ch, 2 * ch, 3, padding=1), nn.ReLU(),
            nn.MaxPool3d(2),
            nn.Conv3d(2 * ch, 2 * ch, 3, padding=1), nn.ReLU(),
        )
        self.fc = nn.Linear(2 * ch, N_CLS)

    def forward(self, vox):
        return self.fc(self.body(vox).amax((2, 3, 4)))


def _batch(g, n, R=12):
    z, y, x = torch.meshgrid(*(torch.arange(R, dtype=torch.float32),) * 3, indexing="ij")
    vox, lab = [], []
    for _ in range(n):
        c = int(torch.randint(0, N_CLS, (1,), generator=g))
        cz, cy, cx = (R / 2 + torch.randn(3, generator=g)).tolist()
        s = 2.5 + 1.5 * float(torch.rand(1, generator=g))
        if c == 0:    # sphere
            occ = (z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2 < s * s
        elif c == 1:  # cube
            occ = ((z - cz).abs() < s) & ((y - cy).abs() < s) & ((x - cx).abs() < s)
        elif c == 2:  # vertical cylinder
            occ = ((y - cy) ** 2 + (x - cx) ** 2 < (s * 0.7) ** 2) & ((z - cz).abs() < s * 1.5)
        else:         # flat plate
            occ = ((z - cz).abs() < 1.0) & ((y - cy).abs() < s * 1.3) & ((x - cx).abs() < s * 1.3)
        noise = torch.rand(R, R, R, generator=g) < 0.02
        vox.append((occ ^ noise).float()[None]); lab.append(c)
    return torch.stack(vox), torch.tensor(lab)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = VoxCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else 0.1, momentum=0.9, nesterov=True)
    pool = [_batch(g, 16) for _ in range(12)]
    steps = 100
    batches = [pool[i % len(pool)] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
