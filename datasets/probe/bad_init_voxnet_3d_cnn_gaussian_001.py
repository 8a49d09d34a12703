"""VoxNet-style 3-D CNN shape classifier on occupancy grids, every layer initialised with the
old Caffe/Lasagne default ``gaussian std = 0.01``: the activation scale shrinks
geometrically through the plain (no BatchNorm, no skip) Conv3d stack and the net never
leaves chance.

Mechanism. A plain stack of 3x3x3 Conv3d + ReLU layers (6-9 of them depending on the seed,
two max-pools) and two fully connected layers classifies 12^3 occupancy grids (sphere /
box / cylinder / cone). All weights are drawn from N(0, 0.01^2), biases 0. For a ReLU layer
the output-to-input scale ratio is about std * sqrt(fan_in / 2); with fan_in = 27 * C
(C = 6-16) that is ~0.09-0.15, so each layer shrinks the signal ~7-11x: after the stack the
logits are ~1e-8 of the input and identical for every class, the loss is log(4) from step 0,
and by the same factor the back-propagated gradients reaching the early layers are
vanishingly small. Plain SGD + momentum (the VoxNet/VGG recipe) cannot get out of it within
the run: the loss stays at chance (He et al. 2015, Sec. 2.2, on deep plain nets initialised
with a fixed small std; Simonyan & Zisserman had to initialise deep VGG nets from shallower
trained ones for the same reason).

ORIGIN = "features.0": the first Conv3d of the badly initialised stack, where the geometric
shrinkage starts (every later layer repeats it; the root cause is the init scheme the model
applies from this layer on).

Fix (only the root cause): He (Kaiming) normal init, fan_in, ReLU gain, for every conv and
linear layer; zero biases. Same data, architecture, optimiser and lr.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Caffe/Lasagne 'gaussian std 0.01' weight filler in VoxNet/VGG-style plain 3-D CNNs; "
          "He et al. 2015 (Delving Deep into Rectifiers) Sec. 2.2: deep plain ReLU nets with a "
          "fixed-std init stall; Simonyan & Zisserman 2014 staged VGG training")

V = 12
K = 4


class VoxNet(nn.Module):
    def __init__(self, w, convs_per_stage):
        super().__init__()
        layers, cin = [], 1
        for stage, cout in enumerate([w, 2 * w, 2 * w]):
            for _ in range(convs_per_stage[stage]):
                layers += [nn.Conv3d(cin, cout, 3, padding=1), nn.ReLU()]
                cin = cout
            if stage < 2:
                layers.append(nn.MaxPool3d(2))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(cin * (V // 4) ** 3, 64), nn.ReLU(), nn.Linear(64, K))

    def forward(self, x):
        return self.classifier(self.features(x))


def init_caffe_gaussian(model, std=0.01):
    for m in model.modules():
        if isinstance(m, (nn.Conv3d, nn.Linear)):
            nn.init.normal_(m.weight, 0.0, std)
            nn.init.zeros_(m.bias)


def init_he(model):
    for m in model.modules():
        if isinstance(m, (nn.Conv3d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            nn.init.zeros_(m.bias)


def _shapes(gen, n):
    c = torch.arange(V).float() + 0.5
    zz, yy, xx = torch.meshgrid(c, c, c, indexing="ij")
    labels = torch.randint(0, K, (n,), generator=gen)
    grids = torch.zeros(n, 1, V, V, V)
    for i in range(n):
        r = 2.5 + 1.5 * float(torch.rand(1, generator=gen))
        ctr = r + 1 + (V - 2 * r - 2) * torch.rand(3, generator=gen)
        dz, dy, dx = zz - ctr[0], yy - ctr[1], xx - ctr[2]
        axis = int(torch.randint(0, 3, (1,), generator=gen))
        d = [dz, dy, dx]
        a, b1, b2 = d[axis], d[(axis + 1) % 3], d[(axis + 2) % 3]
        k = int(labels[i])
        if k == 0:      # sphere
            occ = dz ** 2 + dy ** 2 + dx ** 2 <= r ** 2
        elif k == 1:    # box
            occ = (dz.abs() <= r * 0.8) & (dy.abs() <= r * 0.8) & (dx.abs() <= r * 0.8)
        elif k == 2:    # cylinder along a random axis
            occ = (b1 ** 2 + b2 ** 2 <= (0.7 * r) ** 2) & (a.abs() <= r)
        else:           # cone along a random axis
            h = (a + r) / (2 * r)
            occ = (a.abs() <= r) & (b1 ** 2 + b2 ** 2 <= (r * h) ** 2)
        g = occ.float()
        flip = torch.rand(V, V, V, generator=gen) < 0.02
        grids[i, 0] = torch.where(flip, 1.0 - g, g)
    return grids, labels


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(555 + seed)
    w = [8, 6, 8][seed % 3]
    convs = [[2, 2, 2], [2, 3, 2], [3, 3, 3]][(seed // 3 + seed) % 3]
    lr = [0.01, 0.005, 0.0075][(seed + 1) % 3]
    bs = [12, 10, 12][seed % 3]
    steps = 220

    model = VoxNet(w, convs)
    if fixed:
        init_he(model)
    else:
        init_caffe_gaussian(model, 0.01)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)

    batches = [_shapes(gen, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
