"""FlowNetS-style two-frame optical-flow network (inputs are a tuple (frame1, frame2), concatenated
and passed through a small conv encoder / upsampling decoder that returns a tuple of flow
predictions at 1/2 and full resolution) trained with the multi-scale end-point-error loss. Most
batches come from a synthetic data set with dense ground truth; the mixed-in real-world batches
(KITTI-style) have sparse ground truth with a validity mask. The EPE was written as sqrt(sum_c
((pred - gt) * valid)^2): wherever valid = 0 the squared difference is exactly 0, and the backward
of sqrt at 0 is inf, multiplied by d(diff^2)/d(diff) = 0 -> NaN. The dense batches never hit it,
so training is calm until the first sparse batch arrives mid-run; from then on every weight is
NaN. The fixed run adds a small epsilon inside the square root (sqrt(x + 1e-8)), the standard
guard; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ('FlowNet / PWC-Net multi-scale EPE losses with sparse KITTI validity masks; known pattern: '
          'the gradient of sqrt at exactly 0 is inf and inf*0 = NaN')


class TinyFlowNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
        self.flow_half = nn.Conv2d(32, 2, 3, padding=1)
        self.deconv = nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1)
        self.flow_full = nn.Conv2d(16 + 16 + 2, 2, 3, padding=1)

    def forward(self, f1, f2):
        c1 = F.leaky_relu(self.conv1(torch.cat([f1, f2], 1)), 0.1)
        c3 = F.leaky_relu(self.conv3(F.leaky_relu(self.conv2(c1), 0.1)), 0.1)
        fh = self.flow_half(c3)
        up = F.leaky_relu(self.deconv(c3), 0.1)
        ff = self.flow_full(torch.cat([up, c1, F.interpolate(fh, scale_factor=2.0) * 2], 1))
        return ff, fh


def make_loss(eps):
    def epe(pred, gt, valid):
        d = (pred - gt) * valid
        return torch.sqrt((d * d).sum(1) + eps).sum() / valid.sum().clamp(min=1)

    def loss_fn(out, tgt):
        ff, fh = out
        gt, valid = tgt["flow"], tgt["valid"]
        gt_h = F.avg_pool2d(gt, 2) / 2
        valid_h = (F.avg_pool2d(valid, 2) > 0.99).float()
        return epe(ff, gt, valid) + 0.5 * epe(fh, gt_h, valid_h)
    return loss_fn


def _make_batch(g, n, sparse, s=24):
    ii = torch.arange(s).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    f1 = torch.zeros(n, 1, s, s)
    f2 = torch.zeros(n, 1, s, s)
    flow = torch.zeros(n, 2, s, s)
    for i in range(n):
        u, v = (torch.rand(2, generator=g) * 4 - 2).tolist()
        k = torch.rand(4, generator=g) * 0.6 + 0.3
        ph = torch.rand(2, generator=g) * 6.28
        tex = lambda x, y: torch.sin(k[0] * x + ph[0]) * torch.cos(k[1] * y + ph[1]) + 0.5 * torch.sin(k[2] * x + k[3] * y)
        f1[i, 0] = tex(xx, yy)
        f2[i, 0] = tex(xx - u, yy - v)
        flow[i, 0], flow[i, 1] = u, v
    valid = torch.ones(n, 1, s, s)
    if sparse:                                   # KITTI-like: GT only on ~40% of the pixels
        valid = (torch.rand(n, 1, s, s, generator=g) < 0.4).float()
    return (f1, f2), {"flow": flow * valid, "valid": valid}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 8, sparse=(b == 27)) for b in range(32)]
    model = TinyFlowNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.9, 0.999))
    steps = 160
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=make_loss(eps=1e-8 if fixed else 0.0), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
