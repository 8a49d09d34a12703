"""Coarse-to-fine optical-flow network trained with the PWC-Net multi-scale loss: the flow is
predicted at 1/4, 1/2 and full resolution (dict output), the ground truth is scaled by 20 as in the
PWC-Net training code, and the per-level endpoint error is *summed* over pixels (not averaged),
weighted 0.32/0.08/0.02 and summed over levels, then averaged over the batch.  The loss therefore
starts in the hundreds and the raw gradients are large -- values that look like a blow-up to a
reader used to mean-reduced losses -- but Adam's update is invariant to the loss scale and the run
trains smoothly."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Sun et al. 2018 PWC-Net: multi-scale training loss with alpha = (0.32, 0.08, 0.02, ...), "
          "ground truth scaled by 20, per-level sum of L2 EPE (NVlabs/PWC-Net, pytorch ports)")


class CoarseToFineFlow(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        a = lambda: nn.LeakyReLU(0.1)
        self.enc1 = nn.Sequential(nn.Conv2d(6, c, 3, stride=2, padding=1), a())           # 1/2
        self.enc2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), a())       # 1/4
        self.flow4 = nn.Conv2d(2 * c, 2, 3, padding=1)
        self.up2 = nn.Sequential(nn.ConvTranspose2d(2 * c + 2, c, 4, stride=2, padding=1), a())
        self.flow2 = nn.Conv2d(2 * c + 2, 2, 3, padding=1)
        self.up1 = nn.Sequential(nn.ConvTranspose2d(c + 2, c, 4, stride=2, padding=1), a())
        self.flow1 = nn.Conv2d(c + 2, 2, 3, padding=1)

    def forward(self, f0, f1):
        e1 = self.enc1(torch.cat([f0, f1], 1)); e2 = self.enc2(e1)
        fl4 = self.flow4(e2)
        up4 = F.interpolate(fl4, scale_factor=2, mode="bilinear", align_corners=False)
        u2 = self.up2(torch.cat([e2, fl4], 1))
        fl2 = self.flow2(torch.cat([u2, e1, up4], 1)) + up4            # residual refinement
        up2 = F.interpolate(fl2, scale_factor=2, mode="bilinear", align_corners=False)
        u1 = self.up1(torch.cat([u2, fl2], 1))
        fl1 = self.flow1(torch.cat([u1, up2], 1)) + up2
        return {"flow4": fl4, "flow2": fl2, "flow1": fl1}


def _pairs(g, n, s=16):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    f0s, f1s, flows = [], [], []
    for _ in range(n):
        k = (0.4 + 0.6 * torch.rand(3, 2, generator=g)) * torch.randn(3, 2, generator=g).sign()
        ph = 6.28 * torch.rand(3, generator=g)
        u = (torch.rand(2, generator=g) - 0.5) * 4.0
        def img(dx, dy):
            return torch.sin(k[:, 0, None, None] * (xs - dx) + k[:, 1, None, None] * (ys - dy) + ph[:, None, None])
        f0s.append(img(0.0, 0.0)); f1s.append(img(u[0], u[1]))
        flows.append(u[:, None, None].expand(2, s, s).clone())
    return (torch.stack(f0s), torch.stack(f1s)), torch.stack(flows)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CoarseToFineFlow()
    pool = [_pairs(g, 8) for _ in range(12)]
    steps = 200
    batches = [pool[i % len(pool)] for i in range(steps)]
    weights = {"flow4": 0.32, "flow2": 0.08, "flow1": 0.02}

    def loss_fn(out, gt):
        gt = gt * 20.0                                   # PWC-Net flow scaling
        total = 0.0
        for name, w in weights.items():
            pred = out[name]
            # PWC-Net downsamples the (scaled) gt to each level without rescaling the vectors
            gt_l = F.adaptive_avg_pool2d(gt, pred.shape[-2:])
            epe = ((pred - gt_l) ** 2).sum(1).add(1e-8).sqrt()
            total = total + w * epe.sum((1, 2))
        return total.mean()

    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
