"""Trimap-guided image-matting network (image + trimap as a tuple input, small conv encoder,
ParseNet-style global-context branch broadcast-added to every pixel, sigmoid alpha head trained
with the Deep-Image-Matting Charbonnier alpha loss).  The global context is computed with
``feat.sum(dim=(2, 3))`` instead of a global *average*, so the context vector is ~H*W = 256 times
the size of a pixel feature, and the gradient reaching ``ctx_proj`` is amplified by the same
factor.  The first update already turns the context branch into a huge image-wide offset on every
alpha logit (|logit| ~ 20 after one step, ~1000 after ten): the sigmoid ``alpha_act`` is saturated
at 0 or 1 on every pixel, its derivative is ~0, and the alpha loss cannot move any more -- the run
stalls at the loss of a near-binary, image-wide matte, always finite.  The fix is global average pooling (context of unit scale, logits in
the sigmoid's active range)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "alpha_act"
SOURCE = ("Liu et al. 2015 ParseNet global context (average pooling); Xu et al. 2017 Deep Image "
          "Matting alpha loss; 'predicted alpha is all zeros / all ones' matting issues")


class MattingNet(nn.Module):
    def __init__(self, c=16, pool="sum"):
        super().__init__()
        self.pool = pool
        self.encoder = nn.Sequential(nn.Conv2d(4, c, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.ctx_proj = nn.Conv2d(c, c, 1)
        self.refine = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.alpha_head = nn.Conv2d(c, 1, 3, padding=1)
        self.alpha_act = nn.Sigmoid()

    def forward(self, img, trimap):
        f = self.encoder(torch.cat([img, trimap], 1))
        ctx = f.sum(dim=(2, 3), keepdim=True) if self.pool == "sum" else f.mean(dim=(2, 3), keepdim=True)
        f = f + self.ctx_proj(ctx)
        return self.alpha_act(self.alpha_head(self.refine(f))).squeeze(1)


def _composites(g, n, s=16):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    imgs, tris, alphas = [], [], []
    for _ in range(n):
        c = 4 + (s - 8) * torch.rand(2, generator=g)
        r = 3 + 3 * torch.rand((), generator=g)
        soft = 0.8 + 1.5 * torch.rand((), generator=g)
        d = ((xs - c[0]) ** 2 + (ys - c[1]) ** 2).sqrt()
        alpha = torch.sigmoid((r - d) / soft)
        fg = torch.rand(3, 1, 1, generator=g); bg = torch.rand(3, 1, 1, generator=g)
        img = alpha * fg + (1 - alpha) * bg + 0.03 * torch.randn(3, s, s, generator=g)
        tri = torch.full((s, s), 0.5); tri[alpha > 0.95] = 1.0; tri[alpha < 0.05] = 0.0
        imgs.append(img); tris.append(tri[None]); alphas.append(alpha)
    return (torch.stack(imgs), torch.stack(tris)), torch.stack(alphas)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MattingNet(pool="mean" if fixed else "sum")
    pool = [_composites(g, 8) for _ in range(10)]
    steps = 120
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(alpha, gt):
        return ((alpha - gt) ** 2 + 1e-6 ** 2).sqrt().mean()     # DIM alpha prediction loss

    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
