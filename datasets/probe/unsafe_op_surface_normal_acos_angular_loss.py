"""Small U-Net predicting per-pixel surface normals from depth, trained with the angular loss
acos(<n_pred, n_gt>). The run is calm until the net fits the planar scenes (half are fronto-parallel
walls with normal exactly (0,0,1)): some pixels align to < ~2e-4 rad, the fp32 cosine rounds to 1.0,
d acos/dx = -1/sqrt(1-x^2) = -inf, the backward turns NaN and the next step's loss is NaN.
fixed=True: cosine clamped to [-1+1e-6, 1-1e-6] before acos; model, data, optimiser unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("acos angular-error loss for gaze/surface-normal estimation; PyTorch forum/GitHub reports "
          "'torch.acos gives NaN gradient when cosine similarity is 1', fixed by clamping to 1-eps")

H = W = 16


class UNetNormals(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(1, c, 3, padding=1, padding_mode="replicate"), nn.GELU(), nn.Conv2d(c, c, 3, padding=1, padding_mode="replicate"), nn.GELU())
        self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1, padding_mode="replicate")
        self.mid = nn.Sequential(nn.GELU(), nn.Conv2d(2 * c, 2 * c, 3, padding=1, padding_mode="replicate"), nn.GELU())
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(2 * c, c, 3, padding=1, padding_mode="replicate"), nn.GELU())
        self.out = nn.Conv2d(c, 3, 1)

    def forward(self, depth):
        e = self.enc1(depth)
        m = self.mid(self.down(e))
        d = self.dec(torch.cat([self.up(m), e], 1))
        return F.normalize(self.out(d), dim=1)


def _data(seed, steps, bs=8):
    g = torch.Generator().manual_seed(40 + seed)
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, H), torch.linspace(-1, 1, W), indexing="ij")
    batches = []
    for _ in range(steps):
        a = (torch.rand(bs, generator=g) - 0.5)
        b = (torch.rand(bs, generator=g) - 0.5)
        wall = torch.rand(bs, generator=g) < 0.5          # fronto-parallel walls: normal (0,0,1)
        a, b = torch.where(wall, 0.0, a), torch.where(wall, 0.0, b)
        c = 1.5 + torch.rand(bs, generator=g)
        depth = a.view(-1, 1, 1) * xx + b.view(-1, 1, 1) * yy + c.view(-1, 1, 1)
        n = torch.stack([-a, -b, torch.ones(bs)], 1)
        n = n / n.norm(dim=1, keepdim=True)
        target = n.view(bs, 3, 1, 1).expand(bs, 3, H, W).contiguous()
        batches.append((depth.unsqueeze(1), target))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    steps = 250
    torch.manual_seed(seed)
    model = UNetNormals()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def angular_loss(pred, target):
        cos = (pred * target).sum(1)
        if fixed:
            cos = cos.clamp(-1 + 1e-6, 1 - 1e-6)
        return torch.acos(cos).mean()

    return dict(model=model, optimizer=opt, loss_fn=angular_loss, batches=_data(seed, steps),
                steps=steps, amp_dtype=None, scaler=None)
