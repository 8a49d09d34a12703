"""SSD-style single-shot detector head on a VGG-like backbone fed Caffe-convention inputs (0-255
BGR minus the channel mean), with the ParseNet/SSD L2Norm layer (learnable scale initialised to 20)
on the conv4_3-like feature map. Trained under fp16 autocast with a GradScaler. The hand-written
L2Norm computes x.pow(2).sum(channel).sqrt() in the autocast dtype: the backbone features are in
the tens-hundreds (that is why SSD normalises them), so the per-pixel sum of squares passes 65504,
becomes inf in fp16 and x / inf = 0: the normalised map is all zeros, no gradient reaches the
backbone or the heads' weights, and the detection loss sits at its initial level with no NaN in
the loss (silent stall). Fixed: the norm is computed in fp32 (x.float()) inside the L2Norm, as
mmdet/torchvision do; everything else, fp16 autocast and the scaler included, is unchanged."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "l2norm"
SOURCE = "SSD conv4_3 L2Norm (Liu et al. 2016; ParseNet scale=20); mmdet L2Norm casts to float for fp16 training because x.pow(2).sum() overflows in half precision"


class L2Norm(nn.Module):
    def __init__(self, ch, scale, fp32):
        super().__init__()
        self.weight = nn.Parameter(torch.full((ch,), float(scale)))
        self.fp32 = fp32

    def forward(self, x):
        xx = x.float() if self.fp32 else x
        norm = xx.pow(2).sum(1, keepdim=True).sqrt() + 1e-10
        return (xx / norm * self.weight.view(1, -1, 1, 1)).to(x.dtype)


class TinySSD(nn.Module):
    def __init__(self, width, n_anchor, n_cls, fp32_norm):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 24, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(24, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        for m in self.backbone:
            if isinstance(m, nn.Conv2d):  # He init, keeps the activation scale of the 0-255 inputs like the Caffe VGG weights
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                nn.init.zeros_(m.bias)
        self.l2norm = L2Norm(width, 20.0, fp32_norm)
        self.cls_head = nn.Conv2d(width, n_anchor * n_cls, 3, padding=1)
        self.loc_head = nn.Conv2d(width, n_anchor * 4, 3, padding=1)
        self.n_cls = n_cls

    def forward(self, img):
        f = self.l2norm(self.backbone(img))
        B = img.shape[0]
        cls = self.cls_head(f).permute(0, 2, 3, 1).reshape(B, -1, self.n_cls)
        loc = self.loc_head(f).permute(0, 2, 3, 1).reshape(B, -1, 4)
        return cls, loc


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    width = [48, 32, 40][seed % 3]
    bs = [8, 6, 8][seed % 3]
    steps = [50, 60, 45][seed % 3]
    n_anchor, n_cls, S = 2, 4, 16
    colours = torch.tensor([[230., 40, 40], [40, 230, 40], [40, 40, 230], [230, 230, 40]])
    mean = torch.tensor([104., 117., 123.]).view(1, 3, 1, 1)
    def make(n):
        cls_t = torch.randint(0, n_cls, (n, S // 2, S // 2, n_anchor), generator=g)
        loc_t = 0.5 * torch.randn(n, S // 2, S // 2, n_anchor, 4, generator=g)
        loc_t[..., 0] += 0.3 * cls_t.float()
        obj = colours[cls_t[..., 0]].permute(0, 3, 1, 2)                      # (n, 3, S/2, S/2)
        obj = obj.repeat_interleave(2, 2).repeat_interleave(2, 3)
        img = 0.7 * obj + 0.3 * 255 * torch.rand(n, 3, S, S, generator=g)
        return img.clamp(0, 255) - mean, (cls_t.reshape(n, -1), loc_t.reshape(n, -1, 4))
    pool = [make(bs) for _ in range(12)]
    batches = [pool[i % 12] for i in range(steps)]
    model = TinySSD(width, n_anchor, n_cls, fp32_norm=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=[2e-3, 3e-3, 2e-3][seed % 3], momentum=0.9, weight_decay=5e-4)
    def loss_fn(out, y):
        cls, loc = out
        cls_t, loc_t = y
        return F.cross_entropy(cls.reshape(-1, cls.shape[-1]).float(), cls_t.reshape(-1)) + \
            F.smooth_l1_loss(loc.float(), loc_t)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
