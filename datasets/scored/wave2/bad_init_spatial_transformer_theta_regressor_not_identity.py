"""Spatial Transformer Network classifier: a localisation net regresses the 6 affine parameters
theta, affine_grid/grid_sample warp the input, and a small CNN classifies the warped image. The
STN recipe (Jaderberg et al.; the PyTorch STN tutorial) initialises the last localisation layer to
the identity transform (zero weights, bias [1,0,0,0,1,0]). This port of a TF1 model instead
initialised that layer with tf.random_normal (std 1.0): theta starts with entries of magnitude
~1-5, i.e. random large zooms, shears and translations of several image widths, so almost every
sampling point lands outside the image and grid_sample returns the zero padding. The warped image
is blank whatever the input, the classifier can only learn the class prior, and the gradient
reaching theta is exactly zero outside the image, so the run sits at ~log(K) (silent stall).
Fixed: identity initialisation of loc_fc (weights 0, bias identity)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "loc_fc"
SOURCE = "PyTorch 'Spatial Transformer Networks Tutorial' (fc_loc[2] initialised to the identity); Jaderberg et al. 2015 STN; issues where STN accuracy stays at chance without identity init"


class STNClassifier(nn.Module):
    def __init__(self, width, n_cls, identity_init):
        super().__init__()
        self.loc_conv = nn.Sequential(nn.Conv2d(1, 8, 5), nn.MaxPool2d(2), nn.ReLU())
        self.loc_hidden = nn.Sequential(nn.Linear(8 * 6 * 6, 32), nn.ReLU())
        self.loc_fc = nn.Linear(32, 6)
        if identity_init:
            nn.init.zeros_(self.loc_fc.weight)
            with torch.no_grad():
                self.loc_fc.bias.copy_(torch.tensor([1.0, 0, 0, 0, 1.0, 0]))
        else:  # ported from TF1 code: tf.random_normal initializer (stddev=1.0) for every dense layer
            nn.init.normal_(self.loc_fc.weight, std=1.0)
            nn.init.normal_(self.loc_fc.bias, std=1.0)
        self.cls = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
                                 nn.Flatten(), nn.Linear(4 * width, n_cls))

    def forward(self, x):
        theta = self.loc_fc(self.loc_hidden(self.loc_conv(x).flatten(1))).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.shape, align_corners=False)
        return self.cls(F.grid_sample(x, grid, align_corners=False))


def _shapes():
    z = torch.zeros(4, 7, 7)
    z[0, 3, :] = 1; z[0, :, 3] = 1                     # plus
    z[1, 0, :] = 1; z[1, 6, :] = 1; z[1, :, 0] = 1; z[1, :, 6] = 1   # square
    idx = torch.arange(7); z[2, idx, idx] = 1; z[2, idx, 6 - idx] = 1  # cross
    z[3, :, 1] = 1; z[3, :, 5] = 1                     # two bars
    return z


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9000 + seed)
    width = [8, 12, 10][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = [100, 120, 90][seed % 3]
    lr = [3e-3, 2e-3, 3e-3][seed % 3]
    shapes = _shapes()
    def make(n):
        y = torch.randint(0, 4, (n,), generator=g)
        x = 0.1 * torch.rand(n, 1, 16, 16, generator=g)
        off = torch.randint(0, 10, (n, 2), generator=g)
        for i in range(n):
            x[i, 0, off[i, 0]:off[i, 0] + 7, off[i, 1]:off[i, 1] + 7] += shapes[y[i]]
        return x, y
    pool = [make(bs) for _ in range(20)]
    batches = [pool[i % 20] for i in range(steps)]
    model = STNClassifier(width, 4, identity_init=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
