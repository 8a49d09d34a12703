"""Surface-normal estimation U-Net (depth map -> unit normals), one batch of scans with holes whose
zero-vector "invalid" normals are turned into NaN by the loader's re-normalisation.

Mechanism: ground-truth normals are stored as float16 vectors, invalid pixels (sensor holes) as
(0, 0, 0), which the masked cosine loss skips (`valid = gt.abs().sum(1) > 0`, the NYUv2/ScanNet
convention).  The loader re-normalises every target to undo the float16 quantisation:
`n / n.norm(dim=1, keepdim=True)`.  For almost every batch there are no holes and this is
harmless; the one batch that comes from a scan with holes gets 0/0 = NaN targets, the validity
mask no longer recognises them (NaN != 0), the NaNs reach the loss and the run becomes
non-finite at that step (the step varies with the seed).

ORIGIN: None.  The model is healthy; the corruption is in one batch of targets and first
appears in the loss, not in a module.

Fix: clean the corrupt batch in the loader: re-normalise with `F.normalize(n, dim=1, eps=1e-6)`,
which keeps the zero vectors at exactly zero so the mask skips them as intended.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("NYUv2 / ScanNet surface-normal targets with invalid pixels stored as zero vectors; "
          "normalising them by their norm gives NaN (cf. GeoNet/FrameNet issue threads 'loss "
          "becomes nan at some iteration, invalid normals')")


class TinyUNet(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(1, w, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(w, w, 3, padding=1), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(2 * w, w, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(w, 3, 1))

    def forward(self, depth):
        e1 = self.enc1(depth)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        d = self.dec(torch.cat([self.up(e2), e1], 1))
        return F.normalize(d, dim=1)


def masked_cosine_loss(pred, gt):
    valid = (gt.abs().sum(1) > 0).float()
    cos = (pred * gt).sum(1)
    return ((1.0 - cos) * valid).sum() / valid.sum().clamp_min(1.0)


def _scene(g, n, size):
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size),
                            indexing="ij")
    a = (torch.rand(n, 1, 1, generator=g) * 2 - 1) * 0.8
    b = (torch.rand(n, 1, 1, generator=g) * 2 - 1) * 0.8
    c = 2.0 + torch.rand(n, 1, 1, generator=g)
    cx = (torch.rand(n, 1, 1, generator=g) * 2 - 1) * 0.5
    cy = (torch.rand(n, 1, 1, generator=g) * 2 - 1) * 0.5
    amp = (torch.rand(n, 1, 1, generator=g) * 2 - 1) * 0.6
    s2 = 0.15 + 0.2 * torch.rand(n, 1, 1, generator=g)
    bump = amp * torch.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / s2)
    z = a * xs + b * ys + c + bump
    dzdx = a + bump * (-2 * (xs - cx) / s2)
    dzdy = b + bump * (-2 * (ys - cy) / s2)
    nrm = torch.stack([-dzdx, -dzdy, torch.ones_like(z)], 1)
    nrm = nrm / nrm.norm(dim=1, keepdim=True)
    return z[:, None], nrm


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    w = [12, 16, 20][seed % 3]
    batch = [8, 12, 10][seed % 3]
    lr = [2e-3, 1.5e-3, 2.5e-3][seed % 3]
    steps = 120
    bad_step = [47, 83, 66][seed % 3]
    size = 16
    model = TinyUNet(w)
    batches = []
    for t in range(steps):
        depth, nrm = _scene(g, batch, size)
        depth = depth + 0.01 * torch.randn(depth.shape, generator=g)
        stored = nrm.half()                                   # float16 on disk
        if t == bad_step:                                     # scan with sensor holes
            hole = torch.rand(batch, 1, size, size, generator=g) < 0.15
            stored = stored.masked_fill(hole, 0.0)
            depth = depth.masked_fill(hole, 0.0)
        stored = stored.float()
        if fixed:
            target = F.normalize(stored, dim=1, eps=1e-6)
        else:
            target = stored / stored.norm(dim=1, keepdim=True)
        batches.append(((depth - 2.5) / 0.5, target))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": masked_cosine_loss,
            "batches": batches, "steps": steps}
