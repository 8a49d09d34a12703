"""Small I3D-style video classifier built by inflating 2-D 'pretrained' conv kernels to 3-D
(kernel 3x3 -> 3x3x3) and fine-tuned with frozen BatchNorm (FrozenBatchNorm layers keep the
2-D network's statistics, as detection/video codebases do for small batches). The inflation repeats
each 2-D kernel along time but forgets I3D's 1/T rescale, so on temporally smooth video every conv
layer responds ~3x stronger than the 2-D layer it came from; the frozen BN cannot re-normalise, and
the scale compounds geometrically: x3, x9, x27, ... x6561 after eight layers. The logits are in the
thousands from step 0 and the first SGD updates, scaled by those activations, blow the weights up
until the loss is inf/NaN. Fix: divide the inflated kernels by the temporal size (I3D's
bootstrap-from-2D init), which keeps every layer at the 2-D scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "blocks.0.conv"
SOURCE = ("Carreira & Zisserman 2017 (I3D): inflated filters are repeated N times along time and "
          "rescaled by 1/N; ports that omit the rescale with frozen BN (e.g. SlowFast/PySlowFast "
          "BN.FREEZE, torchvision FrozenBatchNorm2d) diverge immediately")

N_CLS = 4


class FrozenBN3d(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.register_buffer("weight", torch.ones(c)); self.register_buffer("bias", torch.zeros(c))
        self.register_buffer("running_mean", torch.zeros(c)); self.register_buffer("running_var", torch.ones(c))

    def forward(self, x):
        scale = self.weight / torch.sqrt(self.running_var + 1e-5)
        shift = self.bias - self.running_mean * scale
        return x * scale.view(1, -1, 1, 1, 1) + shift.view(1, -1, 1, 1, 1)


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv3d(cin, cout, 3, padding=1, bias=False)
        self.bn = FrozenBN3d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class TinyI3D(nn.Module):
    def __init__(self, widths=(3, 12, 12, 12, 16, 16, 16, 16, 16)):
        super().__init__()
        self.blocks = nn.ModuleList(Block(a, b) for a, b in zip(widths[:-1], widths[1:]))
        self.fc = nn.Linear(widths[-1], N_CLS)

    def forward(self, clip):
        x = clip
        for i, b in enumerate(self.blocks):
            x = b(x)
            if i in (1, 4):
                x = F.max_pool3d(x, (1, 2, 2))
        return self.fc(x.mean((2, 3, 4)))


def _inflate(model, rescale):
    for m in model.modules():
        if isinstance(m, nn.Conv3d):
            cout, cin, t, kh, kw = m.weight.shape
            w2d = torch.empty(cout, cin, kh, kw)
            nn.init.kaiming_normal_(w2d, nonlinearity="relu")        # the '2-D pretrained' kernel
            w3d = w2d.unsqueeze(2).repeat(1, 1, t, 1, 1)
            if rescale:
                w3d = w3d / t
            with torch.no_grad():
                m.weight.copy_(w3d)


def _batch(g, n, T=8, H=16):
    yy, xx = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(H, dtype=torch.float32), indexing="ij")
    labs = torch.randint(0, N_CLS, (n,), generator=g)
    clips = torch.zeros(n, 3, T, H, H)
    for b, c in enumerate(labs.tolist()):
        x0, y0 = (4 + 8 * torch.rand(2, generator=g)).tolist()
        col = torch.tensor([[1., .2, .2], [.2, 1., .2], [.2, .2, 1.], [1., 1., .2]][c]) * (0.7 + 0.3 * torch.rand(1, generator=g))
        for t in range(T):
            dx, dy = [(0.5 * t, 0), (-0.5 * t, 0), (0, 0.5 * t), (0, -0.5 * t)][c]   # motion direction
            blob = torch.exp(-((xx - x0 - dx) ** 2 + (yy - y0 - dy) ** 2) / 4.0)
            clips[b, :, t] = col.view(3, 1, 1) * blob + 0.3
    clips = clips + 0.05 * torch.randn(n, 3, T, H, H, generator=g)
    return (clips - 0.45) / 0.25, labs


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyI3D()
    _inflate(model, rescale=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.004, momentum=0.9)
    pool = [_batch(g, 8) for _ in range(10)]
    steps = 80
    batches = [pool[i % len(pool)] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
