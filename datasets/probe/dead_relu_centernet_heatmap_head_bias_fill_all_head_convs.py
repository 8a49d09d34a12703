"""CenterNet-style keypoint heatmap detector (small conv backbone + heatmap head).

Mechanism: CenterNet initialises the *last* conv of the heatmap head with bias -2.19
(= -log((1-0.1)/0.1), the focal-loss prior). A common port writes
`for m in self.hm_head.modules(): if isinstance(m, nn.Conv2d): m.bias.data.fill_(-2.19)`,
which also hits the hidden 3x3 conv of the head. With the std-0.001 head init its pre-activations have std ~0.01, so a
-2.19 bias puts every unit of the head ReLU below zero from step 0: the head is dead, the
heatmap is a constant sigmoid(bias) and only the final bias can move. The loss stays flat
(no jump, no NaN).
ORIGIN: hm_head.1, the ReLU of the head that is dead from the first step.
Fix: apply the prior bias only to the final conv (hm_head.2); hidden conv bias left at 0.
"""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "hm_head.1"
SOURCE = "CenterNet (Zhou et al. 2019, xingyizhou/CenterNet) heatmap head fill_(-2.19) prior; ports that fill every conv bias in the head"


class CenterNetSmall(nn.Module):
    def __init__(self, w, ncls):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
            nn.Conv2d(w, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(inplace=True))
        self.hm_head = nn.Sequential(nn.Conv2d(w, w, 3, padding=1), nn.ReLU(inplace=True),
                                     nn.Conv2d(w, ncls, 1))

    def forward(self, x):
        return self.hm_head(self.backbone(x))


def _batch(g, bs, ncls, S):
    x = torch.randn(bs, 3, S, S, generator=g) * 0.3
    y = torch.zeros(bs, ncls, S, S)
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    for b in range(bs):
        for _ in range(3):
            c = int(torch.randint(0, ncls, (1,), generator=g))
            cy, cx = [int(v) for v in torch.randint(3, S - 3, (2,), generator=g)]
            x[b, c, cy - 2:cy + 3, cx - 2:cx + 3] += 2.0
            y[b, c] = torch.maximum(y[b, c], torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 9.0))
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, bs, lr, steps = [(16, 8, 2e-3, 80), (24, 6, 1e-3, 100), (12, 10, 3e-3, 70)][seed % 3]
    ncls, S = 2, 20
    model = CenterNetSmall(w, ncls)
    for m in model.hm_head.modules():  # CenterNet fill_fc_weights-style head init
        if isinstance(m, nn.Conv2d):
            nn.init.normal_(m.weight, std=0.001)
            nn.init.zeros_(m.bias)
    if fixed:
        model.hm_head[2].bias.data.fill_(-2.19)
    else:
        for m in model.hm_head.modules():
            if isinstance(m, nn.Conv2d):
                m.bias.data.fill_(-2.19)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, y):  # heatmap BCE (as in several CenterNet ports), mean over pixels
        return F.binary_cross_entropy_with_logits(out, y)

    batches = [_batch(g, bs, ncls, S) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
