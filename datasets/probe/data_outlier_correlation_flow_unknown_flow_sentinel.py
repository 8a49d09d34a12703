"""Optical-flow net with a local correlation (cost) volume; one batch carries the .flo
"unknown flow" sentinel (1e10) in its ground truth.

Mechanism
---------
A FlowNet-C / PWC-like toy: a shared conv encoder embeds both frames, a local
correlation layer compares each frame-1 feature with frame-2 features at every
displacement in a (2r+1)^2 window (the cost volume), a soft-argmax over the cost volume
gives a coarse flow (as in GC-Net/PSMNet-style regression), and a conv decoder reads
[cost volume, frame-1 features] and adds a residual correction.  The loss is the
per-pixel squared end-point error (MSE on (u, v)), optimised with SGD + momentum.

The training data are mostly clean synthetic pairs (textured background translating,
plus a moving foreground square).  At one step (seed-dependent, mid-training) the batch
holds a couple of samples decoded from Middlebury-format .flo files.  Their occluded or
unmatched pixels hold the format's UNKNOWN_FLOW value 1e10 (flow_code's
UNKNOWN_FLOW_THRESH = 1e9), and the loader passes them through unmasked.  The loss for
that one batch is ~1e18 instead of ~1.  Its gradient w.r.t. the predicted flow is
~2e10 per pixel, so the single SGD step (with a momentum buffer that keeps pushing
afterwards) moves the decoder and encoder weights by many orders of magnitude.
At the very next step the forward pass overflows and the loss becomes inf/NaN.  Every
other batch is ordinary, so before the corrupt batch the run looks completely healthy.

ORIGIN = "decoder.out": the final flow conv is where the corrupt targets enter
the graph (its output gets the 1e10-sized error and the first gigantic gradient).  The
blow-up then spreads upstream through the decoder, the correlation and the encoder.

Seed variation: image size, search radius, widths, batch size, lr, the step at which
the corrupt batch arrives and how many samples in it are corrupt.

Fix: the same data with the corrupt batch cleaned, i.e. the sentinel pixels restored
to their true flow (what a validity mask `flow.abs() < 1e9` plus a cleaned file would
give).  Model, optimiser, lr and all other batches are identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "decoder.out"
SOURCE = ("Middlebury .flo format: unknown flow is stored as 1e10 (flow_code UNKNOWN_FLOW_THRESH 1e9); "
          "flow repos (e.g. RAFT) mask `valid = (flow.abs() < 1000)` for this reason; issues about "
          "loss suddenly becoming NaN/huge on one sample of a mixed flow dataset")

UNKNOWN_FLOW = 1e10


def _correlation(f1, f2, r):
    """Local cost volume: mean over channels of f1 * f2 shifted by (dy, dx), |dy|,|dx| <= r."""
    b, c, h, w = f1.shape
    f2p = F.pad(f2, (r, r, r, r))
    vols = []
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            vols.append((f1 * f2p[:, :, r + dy:r + dy + h, r + dx:r + dx + w]).mean(1, keepdim=True))
    return torch.cat(vols, 1)


class FlowNetCLite(nn.Module):
    def __init__(self, c, r, hid):
        super().__init__()
        self.r = r
        self.encoder = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(c, c, 3, padding=1))
        k = (2 * r + 1) ** 2
        d = torch.arange(-r, r + 1, dtype=torch.float32)
        dy, dx = torch.meshgrid(d, d, indexing="ij")
        self.register_buffer("disp", torch.stack([dx.reshape(-1), dy.reshape(-1)]).view(1, 2, k, 1, 1))
        self.beta = nn.Parameter(torch.tensor(1.0))  # learnable soft-argmax sharpness
        self.decoder = nn.Sequential()
        self.decoder.add_module("conv1", nn.Conv2d(k + c, hid, 3, padding=1))
        self.decoder.add_module("act1", nn.ReLU())
        self.decoder.add_module("out", nn.Conv2d(hid, 2, 3, padding=1))

    def forward(self, im1, im2):
        f1, f2 = self.encoder(im1), self.encoder(im2)
        corr = _correlation(f1, f2, self.r)
        prob = torch.softmax(self.beta * corr, 1).unsqueeze(1)          # (B, 1, K, H, W)
        coarse = (prob * self.disp).sum(2)                               # soft-argmax flow
        return coarse + self.decoder(torch.cat([corr, f1], 1))           # + learned residual


def _pair(g, s, r):
    """One synthetic pair: background translation + a moving square. Returns im1, im2, flow, occluded."""
    tex = torch.randn(1, 3, s + 8, s + 8, generator=g)
    tex = F.avg_pool2d(tex, 3, stride=1, padding=1) * 2.0
    bu, bv = [int(v) for v in torch.randint(-r + 1, r, (2,), generator=g)]
    fu, fv = [int(v) for v in torch.randint(-r, r + 1, (2,), generator=g)]
    im1 = tex[:, :, 4:4 + s, 4:4 + s]
    im2 = tex[:, :, 4 - bv:4 - bv + s, 4 - bu:4 - bu + s].clone()  # im2(x) = im1(x - b): content moved by b
    flow = torch.zeros(1, 2, s, s)
    flow[:, 0], flow[:, 1] = float(bu), float(bv)
    # foreground square with its own texture, moved by (fu, fv)
    q = s // 4 + int(torch.randint(0, s // 6 + 1, (1,), generator=g))
    y0 = int(torch.randint(r, s - q - r, (1,), generator=g))
    x0 = int(torch.randint(r, s - q - r, (1,), generator=g))
    patch = torch.randn(1, 3, q, q, generator=g) * 1.5
    im1 = im1.clone()
    im1[:, :, y0:y0 + q, x0:x0 + q] = patch
    im2[:, :, y0 + fv:y0 + fv + q, x0 + fu:x0 + fu + q] = patch
    flow[:, 0, y0:y0 + q, x0:x0 + q] = float(fu)
    flow[:, 1, y0:y0 + q, x0:x0 + q] = float(fv)
    # background pixels of im1 whose destination is covered by the square in im2: occluded
    occ = torch.zeros(1, 1, s, s, dtype=torch.bool)
    ys, xs = torch.meshgrid(torch.arange(s), torch.arange(s), indexing="ij")
    dy, dx = ys + bv, xs + bu
    covered = (dy >= y0 + fv) & (dy < y0 + fv + q) & (dx >= x0 + fu) & (dx < x0 + fu + q)
    inside = (ys >= y0) & (ys < y0 + q) & (xs >= x0) & (xs < x0 + q)
    occ[0, 0] = covered & ~inside
    return im1, im2, flow, occ


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3100 + seed)
    s = [24, 28, 32][seed % 3]
    r = [2, 3][seed % 2]
    c, hid = [(8, 16), (12, 16), (8, 24)][(seed // 2) % 3]
    b = [8, 10, 12][(seed + 1) % 3]
    lr = [0.02, 0.015, 0.02][seed % 3]
    steps = 200
    bad_step = 40 + (seed * 23) % 80
    n_bad = 1 + seed % 2

    model = FlowNetCLite(c, r, hid)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    batches = []
    for i in range(steps):
        ims1, ims2, flows = [], [], []
        for j in range(b):
            im1, im2, flow, occ = _pair(g, s, r)
            if i == bad_step and j < n_bad and not fixed:
                flow = torch.where(occ.expand_as(flow), torch.full_like(flow, UNKNOWN_FLOW), flow)
            ims1.append(im1)
            ims2.append(im2)
            flows.append(flow)
        batches.append(((torch.cat(ims1), torch.cat(ims2)), torch.cat(flows)))

    def loss_fn(pred, gt):
        return ((pred - gt) ** 2).sum(1).mean()  # squared end-point error

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
