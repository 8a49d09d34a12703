"""RGB + sparse-depth completion network (NYU-v2-style sparse-to-dense: RGB image and a sparse
depth map with ~5% valid samples as a tuple input, dense depth in metres as target, masked L2
loss on valid pixels, momentum SGD).  One shard of the training set was exported straight from
the Kinect's raw uint16 depth PNGs, i.e. in *millimetres*, without the /1000 conversion.  The
batch drawn from it at step 60 has sparse-input and target depths of 500-5000 instead of 0.5-5:
the loss jumps by ~six orders of magnitude, the resulting gradient step throws the weights far
away, and the following (good) batches diverge to inf/NaN.  The fix is to filter the corrupt shard
(here: convert that frame to metres like the rest)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "depth_enc.0"
SOURCE = ("Ma & Karaman 2018 sparse-to-dense depth completion; NYU Depth v2 raw 16-bit PNG depth in mm "
          "('divide by 1000') pitfall; 'loss suddenly becomes nan' reports traced to one mis-scaled file")


class SparseToDense(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.rgb_enc = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU())
        self.depth_enc = nn.Sequential(nn.Conv2d(2, c, 3, padding=1), nn.ReLU())
        self.body = nn.Sequential(nn.Conv2d(2 * c, c, 3, padding=2, dilation=2), nn.ReLU(),
                                  nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(c, 1, 3, padding=1)

    def forward(self, rgb, sparse):
        valid = (sparse > 0).float()
        f = torch.cat([self.rgb_enc(rgb), self.depth_enc(torch.cat([sparse, valid], 1))], 1)
        return self.head(self.body(f)).squeeze(1)


def _frames(g, n, s=16):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    rgbs, sparses, depths = [], [], []
    for _ in range(n):
        # a tilted floor/wall plane plus a box in front of it
        a, b = (torch.rand(2, generator=g) - 0.5) * 0.2
        d0 = 1.5 + 2.5 * torch.rand((), generator=g)
        depth = d0 + a * (xs - s / 2) + b * (ys - s / 2)
        c = (4 + 8 * torch.rand(2, generator=g)); w = 3 + 3 * torch.rand((), generator=g)
        box = ((xs - c[0]).abs() < w) & ((ys - c[1]).abs() < w)
        depth = torch.where(box, depth - 0.8, depth).clamp(0.4, 6.0)
        rgb = torch.stack([depth / 6.0, 1 - depth / 6.0, box.float()]) + 0.05 * torch.randn(3, s, s, generator=g)
        keep = (torch.rand(s, s, generator=g) < 0.08).float()
        rgbs.append(rgb); sparses.append((depth * keep)[None]); depths.append(depth)
    return (torch.stack(rgbs), torch.stack(sparses)), torch.stack(depths)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SparseToDense()
    pool = [_frames(g, 8) for _ in range(12)]
    steps = 150
    batches = [pool[i % len(pool)] for i in range(steps)]
    bad_step = 60
    (rgb, sparse), depth = batches[bad_step]
    if fixed:
        batches[bad_step] = ((rgb, sparse.clone()), depth.clone())                 # metres, as everywhere else
    else:
        batches[bad_step] = ((rgb, (sparse * 1000).round()), (depth * 1000).round())  # raw uint16 mm

    def loss_fn(pred, gt):
        valid = (gt > 0).float()
        return (((pred - gt) ** 2) * valid).sum() / valid.sum()

    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
