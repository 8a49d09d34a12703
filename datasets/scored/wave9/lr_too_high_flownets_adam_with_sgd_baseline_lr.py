"""FlowNetS-style optical-flow regressor (two frames concatenated, strided conv encoder, transposed
conv decoder, per-pixel flow output, endpoint-error loss).  FlowNet trains with Adam at lr=1e-4;
this script switched the optimiser from its SGD baseline to Adam but kept the SGD lr=0.1.  Adam's
per-parameter normalised updates are then ~0.1 for every weight, update/weight ratios are far
above 1e-3 from the first step: the EPE jumps from ~1 px to tens or hundreds of pixels, and for the
rest of the run the optimiser only slowly drifts back towards predicting roughly the mean flow --
the loss never gets below its starting value, but it never becomes non-finite either.  The fix is a learning rate in Adam's usual
range (1e-3)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Dosovitskiy et al. 2015 FlowNet (Adam, lr 1e-4); flownet2-pytorch / FlowNetPytorch issues "
          "'EPE does not decrease' traced to a too-large learning rate")


class FlowNetS(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(6, c, 3, stride=2, padding=1), nn.LeakyReLU(0.1))
        self.conv2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.LeakyReLU(0.1))
        self.conv3 = nn.Sequential(nn.Conv2d(2 * c, 2 * c, 3, padding=1), nn.LeakyReLU(0.1))
        self.deconv2 = nn.Sequential(nn.ConvTranspose2d(2 * c, c, 4, stride=2, padding=1), nn.LeakyReLU(0.1))
        self.deconv1 = nn.ConvTranspose2d(2 * c, c, 4, stride=2, padding=1)
        self.predict_flow = nn.Conv2d(c, 2, 3, padding=1)

    def forward(self, f0, f1):
        x1 = self.conv1(torch.cat([f0, f1], 1))
        x3 = self.conv3(self.conv2(x1))
        u2 = self.deconv2(x3)
        u1 = F.leaky_relu(self.deconv1(torch.cat([u2, x1], 1)), 0.1)
        return self.predict_flow(u1)


def _pairs(g, n, s=16):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    f0s, f1s, flows = [], [], []
    for _ in range(n):
        k = (0.5 + 0.7 * torch.rand(3, 2, generator=g)) * torch.randn(3, 2, generator=g).sign()
        ph = 6.28 * torch.rand(3, generator=g)
        u = (torch.rand(2, generator=g) - 0.5) * 4.0            # translation in pixels
        def img(dx, dy):
            return torch.sin(k[:, 0, None, None] * (xs - dx) + k[:, 1, None, None] * (ys - dy) + ph[:, None, None])
        f0s.append(img(0.0, 0.0)); f1s.append(img(u[0], u[1]))
        flows.append(u[:, None, None].expand(2, s, s).clone())
    return (torch.stack(f0s), torch.stack(f1s)), torch.stack(flows)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = FlowNetS()
    pool = [_pairs(g, 8) for _ in range(12)]
    steps = 150
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(flow, gt):
        return ((flow - gt) ** 2).sum(1).add(1e-8).sqrt().mean()      # average EPE

    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 0.1, betas=(0.9, 0.999))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
