"""VoxelMorph-style 3D deformable registration, local NCC loss evaluated in float16.

Mechanism: a small 3D U-Net predicts a dense displacement field that warps the moving volume
(spatial transformer, ``grid_sample``) onto the fixed volume; the loss is the VoxelMorph local
normalised cross-correlation (LNCC) with a large cubic window, computed with box-filter
convolutions. The training step runs under float16 autocast (the AMP recipe copied from a 2D
project) and the LNCC is evaluated inside it: the box-filter ``conv3d`` calls are autocast to
half, and on contrast-rich [0,1] volumes the windowed variance product ``I_var * J_var`` and
``cross * cross`` exceed 65504 -> ``inf / inf = NaN`` in the loss. Inputs are properly
normalised; the overflow is purely a half-precision range problem of the loss op.

ORIGIN: ``flow`` -- the last conv of the network; its warped output is the first tensor fed to
the half-precision LNCC that overflows (the loss itself is not a module).

Fix: run the LNCC in float32 (autocast disabled for the loss, inputs cast with ``.float()``);
the network still runs under float16 autocast.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "flow"
SOURCE = ("voxelmorph/voxelmorph GitHub issues on NaN NCC loss with mixed precision; the NCC "
          "class sums I*I, J*J, I*J over a 9^3+ window with conv3d, whose variance products "
          "overflow float16 on high-contrast volumes (known AMP pitfall for local NCC).")


def block(cin, cout):
    return nn.Sequential(nn.Conv3d(cin, cout, 3, padding=1), nn.LeakyReLU(0.2))


class RegUNet3D(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.enc1 = block(2, c)
        self.enc2 = block(c, 2 * c)
        self.dec1 = block(3 * c, c)
        self.flow = nn.Conv3d(c, 3, 3, padding=1)
        nn.init.normal_(self.flow.weight, std=1e-4)
        nn.init.zeros_(self.flow.bias)

    def forward(self, moving, fixed):
        x = torch.cat([moving, fixed], 1)
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool3d(e1, 2))
        d1 = self.dec1(torch.cat([e1, F.interpolate(e2, scale_factor=2.0, mode="nearest")], 1))
        flow = self.flow(d1)
        B, _, D, H, W = moving.shape
        zz, yy, xx = torch.meshgrid(torch.linspace(-1, 1, D), torch.linspace(-1, 1, H),
                                    torch.linspace(-1, 1, W), indexing="ij")
        base = torch.stack([xx, yy, zz], -1)[None].to(flow.dtype)
        grid = base + flow.permute(0, 2, 3, 4, 1)
        return F.grid_sample(moving.to(grid.dtype), grid, align_corners=True, padding_mode="border")


def lncc(I, J, win):
    pad = win // 2
    k = [torch.ones(1, 1, win, 1, 1, dtype=I.dtype), torch.ones(1, 1, 1, win, 1, dtype=I.dtype),
         torch.ones(1, 1, 1, 1, win, dtype=I.dtype)]

    def box(t):  # separable box *sum* over a win^3 window
        t = F.conv3d(t, k[0], padding=(pad, 0, 0))
        t = F.conv3d(t, k[1], padding=(0, pad, 0))
        return F.conv3d(t, k[2], padding=(0, 0, pad))

    n = float(win ** 3)
    I_sum, J_sum = box(I), box(J)
    I2_sum, J2_sum, IJ_sum = box(I * I), box(J * J), box(I * J)
    u_I, u_J = I_sum / n, J_sum / n
    cross = IJ_sum - u_J * I_sum - u_I * J_sum + u_I * u_J * n
    I_var = I2_sum - 2 * u_I * I_sum + u_I * u_I * n
    J_var = J2_sum - 2 * u_J * J_sum + u_J * u_J * n
    cc = cross * cross / (I_var * J_var + 1e-5)
    return -cc.mean()


def smooth_blobs(g, B, S, n_blobs, shift):
    zz, yy, xx = torch.meshgrid(*(torch.arange(S, dtype=torch.float32),) * 3, indexing="ij")
    vol = torch.zeros(B, 1, S, S, S)
    for b in range(B):
        for _ in range(n_blobs):
            c = torch.rand(3, generator=g) * (S - 6) + 3
            r = float(torch.rand(1, generator=g) * 2 + 2)
            d = ((zz - c[0]) ** 2 + (yy - c[1]) ** 2 + (xx - c[2] - shift) ** 2) / r ** 2
            vol[b, 0] += torch.sigmoid(8 * (1 - d))
    return vol.clamp(0, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    S = [12, 12, 14][seed % 3]
    win = [11, 13, 13][seed % 3]
    c = [6, 4, 4][seed % 3]
    lr = [1e-3, 2e-3, 1e-3][seed % 3]
    B = 2
    steps = 60
    batches = []
    for _ in range(steps):
        gs = torch.Generator().manual_seed(int(torch.randint(0, 2**31, (1,), generator=g)))
        shift = float(torch.rand(1, generator=g) * 1.5 + 1.0)
        fixed_vol = smooth_blobs(gs, B, S, 9, 0.0)
        gs2 = torch.Generator().manual_seed(gs.initial_seed())
        moving = smooth_blobs(gs2, B, S, 9, shift)
        batches.append(((moving, fixed_vol), fixed_vol))
    model = RegUNet3D(c)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    if fixed:
        def loss_fn(warped, target):
            with torch.autocast("cpu", enabled=False):
                return lncc(warped.float(), target.float(), win)
    else:
        def loss_fn(warped, target):
            return lncc(warped, target, win)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
