"""Room-layout point-cloud autoencoder (PointNet-style shared MLP + max-pool encoder, MLP
decoder emitting N points), coordinates in metres, the scans stored as float16 arrays to save
disk, trained with a hand-written Chamfer distance that is summed over points and over the
batch (``tf.reduce_sum`` in the TF code it was ported from) under ``torch.autocast(float16)``
without GradScaler or an fp32 loss.

Mechanism: the decoder output is float16 under autocast and the targets are float16 as
stored, so the differences, squared distances, per-point minima and the final ``sum`` of the
hand-written loss all run in float16 (autocast does not touch these elementwise ops and
reductions). A room spans several metres, so each point contributes a squared error of
~1-30 m^2 at the start; summed over both Chamfer directions, N points and the batch, the loss
is ~1e5, above the float16 maximum of 65504: it is inf from the first step and the backward
pass yields NaN/inf gradients. The model and data are fine in a wider format.

ORIGIN: ``decoder.4``, the decoder's output layer: its point coordinates are the values whose
squared distances are accumulated past the float16 range by the loss.

Fix: compute the loss in float32 (``pred.float()``, ``target.float()``), i.e. fp32 for the
overflowing op; the model still runs under float16 autocast; reduction, optimiser, data and
steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "decoder.4"
SOURCE = ("Achlioptas et al. 2018 point-cloud autoencoders (TF code: Chamfer with tf.reduce_sum); PyTorch AMP "
          "docs: ops not on the autocast fp32 list run in float16, sums can overflow; issues 'Chamfer loss is "
          "inf with --fp16' in point-cloud repositories")


class PointAE(nn.Module):
    def __init__(self, n_pts, width, latent):
        super().__init__()
        self.n = n_pts
        self.encoder = nn.Sequential(nn.Linear(3, width), nn.ReLU(), nn.Linear(width, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                     nn.Linear(width, 3 * n_pts))

    def forward(self, pts):
        z = self.encoder(pts).max(dim=1).values
        return self.decoder(z).view(-1, self.n, 3)


def chamfer_sum(pred, target):
    d = (pred.unsqueeze(2) - target.unsqueeze(1)).pow(2).sum(-1)      # (B, N, M) squared metres
    return d.min(dim=2).values.sum() + d.min(dim=1).values.sum()       # reduce_sum over points and batch


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [128, 96, 160][seed % 3]
    latent = [32, 24, 48][seed % 3]
    batch = [64, 56, 72][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    n_pts, steps = 96, 60

    torch.manual_seed(seed)
    model = PointAE(n_pts, width, latent)

    batches = []
    for _ in range(steps):
        # points sampled on the floor and walls of box-shaped rooms / open-plan offices (metres)
        L = 5.0 + 7.0 * torch.rand(batch, 1, generator=g)
        W = 4.0 + 5.0 * torch.rand(batch, 1, generator=g)
        H = 2.4 + 0.6 * torch.rand(batch, 1, generator=g)
        u = torch.rand(batch, n_pts, generator=g)
        v = torch.rand(batch, n_pts, generator=g)
        face = torch.randint(0, 3, (batch, n_pts), generator=g)
        x = torch.where(face == 1, torch.zeros_like(u), u * L)
        y = torch.where(face == 2, torch.zeros_like(u), torch.where(face == 1, u * W, v * W))
        z = torch.where(face == 0, torch.zeros_like(u), v * H)
        pts = torch.stack([x - L / 2, y - W / 2, z], -1) + 0.02 * torch.randn(batch, n_pts, 3, generator=g)
        pts = pts.half()                                   # scans stored as float16 .npy
        batches.append((pts.float(), pts))

    if fixed:
        def loss_fn(pred, target):
            return chamfer_sum(pred.float(), target.float())
    else:
        loss_fn = chamfer_sum
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps,
            "amp_dtype": torch.float16, "scaler": None}
