"""ViT whose timm-style 'zero-init the head' now hits the hidden layer of an MLP head.

A tiny ViT (linear patch embedding, learned position embedding, CLS token, pre-norm blocks)
classifies 16x16 shape images.  Its init follows timm: the classifier head is zero-initialised
(weight and bias) so training starts from uniform logits.  The head was later changed from a
single Linear to a pre-logits MLP  nn.Sequential(Linear, ReLU, Linear)  and the init line,
written as  self.head[0], now zeroes the hidden Linear instead of the classifier.  Its output
is exactly 0 for every image, ReLU(0) = 0 and PyTorch's ReLU derivative at 0 is 0, so no
gradient ever reaches head[0] or anything below it (blocks, patch embedding): every hidden
ReLU is dead from step 0 and stays dead.  Only the classifier bias trains (to the class
prior, which is uniform here); the loss stays at ~log(4) for the whole run (stall, no NaN).
Fix: zero-initialise the classifier head[-1] as intended (head[0] keeps its default init).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = ("timm VisionTransformer head zero-init (nn.init.zeros_(head.weight)) carried over to a "
          "pre-logits MLP head by index; ReLU'(0) = 0 in PyTorch makes an exactly-zero "
          "pre-activation a dead unit")

N_CLS, S, P = 4, 16, 4


class TinyViT(nn.Module):
    def __init__(self, fixed, d=32, h=4, n=2):
        super().__init__()
        self.patch_embed = nn.Linear(P * P, d)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos_embed = nn.Parameter(torch.randn(1, (S // P) ** 2 + 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, h, 64, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.blocks = nn.TransformerEncoder(layer, n, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, N_CLS))
        target = self.head[-1] if fixed else self.head[0]     # index slip in the buggy run
        nn.init.zeros_(target.weight)
        nn.init.zeros_(target.bias)

    def forward(self, img):
        B = img.shape[0]
        p = img.unfold(2, P, P).unfold(3, P, P).reshape(B, -1, P * P)
        x = torch.cat([self.cls_token.expand(B, -1, -1), self.patch_embed(p)], 1)
        x = self.norm(self.blocks(x + self.pos_embed))
        return self.head(x[:, 0])


def make_images(n, g):
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    cls = torch.randint(0, N_CLS, (n,), generator=g)
    cx = torch.randint(4, S - 4, (n,), generator=g).float()[:, None, None]
    cy = torch.randint(4, S - 4, (n,), generator=g).float()[:, None, None]
    r = 2.0 + 2.0 * torch.rand(n, generator=g)[:, None, None]
    dx, dy = xx - cx, yy - cy
    shapes = [
        (dx.abs() <= r) & (dy.abs() <= r),                     # square
        dx ** 2 + dy ** 2 <= r ** 2,                           # disc
        (dx.abs() <= 0.8) & (dy.abs() <= r + 1),               # vertical bar
        (dy.abs() <= 0.8) & (dx.abs() <= r + 1),               # horizontal bar
    ]
    img = torch.zeros(n, S, S)
    for c in range(N_CLS):
        img[cls == c] = shapes[c][cls == c].float()
    img = img + 0.1 * torch.randn(n, S, S, generator=g)
    return ((img - 0.15) / 0.35).unsqueeze(1), cls


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyViT(fixed)
    steps, bs = 150, 32
    batches = [make_images(bs, g) for _ in range(steps)]
    opt = torch.optim.Adamax(model.parameters(), lr=4e-3)

    def loss_fn(logits, y):
        return F.cross_entropy(logits, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
