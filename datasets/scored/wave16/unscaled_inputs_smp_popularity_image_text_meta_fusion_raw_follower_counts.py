"""Social-media popularity prediction (SMP Challenge style) with image / text / metadata fusion.

Three branches -- a pre-extracted image embedding, a caption embedding and a vector of post/user
metadata -- each go through a small ReLU layer; the concatenation is regressed by a ReLU MLP onto
the log view count (MSE), as in the SMP-Challenge baselines.

Mechanism: the metadata vector is fed raw: follower count (10..2e6), following count, the user's
total post count, days since the account was created (up to ~5000), number of hashtags and the
posting hour.  The image and caption embeddings are O(1), but the first metadata Linear receives
inputs of 1e3..1e6, so the prediction is off by 1e3..1e4 and the MSE is ~1e6..1e7 from the very first
step.  The gradients of that layer are proportional to the raw counts; the first SGD updates
overshoot by many orders of magnitude and the loss diverges to inf/NaN.

ORIGIN: ``meta_mlp.0`` -- the first layer that receives the unscaled metadata.

Fix: log1p-transform and standardise the metadata with dataset statistics (as every SMP baseline
does); the targets (log views) and everything else stay the same.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "meta_mlp.0"
SOURCE = ("SMP Challenge (Social Media Prediction, ACM MM) popularity baselines fusing image, "
          "text and user metadata; raw follower/post counts fed without log/standardisation")


class PopularityNet(nn.Module):
    def __init__(self, img_dim, txt_dim, meta_dim, hidden):
        super().__init__()
        self.img_mlp = nn.Sequential(nn.Linear(img_dim, hidden), nn.ReLU())
        self.txt_mlp = nn.Sequential(nn.Linear(txt_dim, hidden), nn.ReLU())
        self.meta_mlp = nn.Sequential(nn.Linear(meta_dim, hidden // 2), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(2 * hidden + hidden // 2, hidden), nn.ReLU(),
                                  nn.Linear(hidden, 1))

    def forward(self, img, txt, meta):
        h = torch.cat([self.img_mlp(img), self.txt_mlp(txt), self.meta_mlp(meta)], 1)
        return self.head(h).squeeze(1)


def _raw_meta(n, g):
    followers = torch.exp(torch.empty(n).uniform_(2.3, 14.5, generator=g))     # 10 .. 2e6
    following = torch.exp(torch.empty(n).uniform_(1.0, 8.5, generator=g))
    posts = torch.exp(torch.empty(n).uniform_(1.5, 9.5, generator=g))
    days = torch.empty(n).uniform_(30, 5000, generator=g)
    tags = torch.randint(0, 30, (n,), generator=g).float()
    hour = torch.randint(0, 24, (n,), generator=g).float()
    return torch.stack([followers, following, posts, days, tags, hour], 1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=64, lr=1e-3, bs=32, steps=100),
           dict(hidden=96, lr=5e-4, bs=48, steps=90),
           dict(hidden=48, lr=2e-3, bs=24, steps=110)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9900 + seed)
    img_dim, txt_dim = 64, 48
    w_img = torch.randn(img_dim, generator=g) / img_dim ** 0.5
    w_txt = torch.randn(txt_dim, generator=g) / txt_dim ** 0.5
    ref = torch.log1p(_raw_meta(4096, g))                                  # dataset statistics
    mu, sd = ref.mean(0), ref.std(0)

    model = PopularityNet(img_dim, txt_dim, 6, cfg["hidden"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    loss_fn = nn.MSELoss()

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        img = torch.randn(bs, img_dim, generator=g)
        txt = torch.randn(bs, txt_dim, generator=g)
        meta = _raw_meta(bs, g)
        lm = torch.log1p(meta)
        log_views = (2.0 + 0.6 * lm[:, 0] + 0.1 * lm[:, 4] + 0.8 * (img @ w_img) + 0.5 * (txt @ w_txt)
                     + 0.3 * torch.randn(bs, generator=g))
        x_meta = (lm - mu) / sd if fixed else meta
        batches.append(((img, txt, x_meta), log_views))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
