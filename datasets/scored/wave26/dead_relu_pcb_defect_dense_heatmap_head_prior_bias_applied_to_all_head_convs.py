"""PCB defect detector (dense per-cell sigmoid heatmap head, BCE) with a dead ReLU head tower.

Mechanism: bare-board AOI images (one channel) are scanned by a small conv backbone
into a stride-4 grid; a classification tower of 2-3 conv3x3+ReLU layers and a final
conv predict, per grid cell, one logit for each of three defect types (short/spur,
missing hole, open). Following the RetinaNet recipe the head convs get N(0, 0.01)
weights and the classifier bias is set to the rare-class prior
b = -log((1 - pi) / pi) with pi = 0.01 (about two defects per 192 cell-logits). The init loop, however, runs over *every*
Conv2d of the head (``for m in self.cls_head.modules()``), so the hidden tower
convs receive b = -4.6 as well. With weights of std 0.01 their pre-activations are
~ -4.6 +- 0.05 at every location: every tower ReLU outputs exactly zero from step 0,
passes exactly zero gradient to itself, to the tower below and to the backbone, and
the final conv sees only zeros. Only the final bias can learn, and it already sits
at the base rate, the optimum of a constant predictor under BCE: the loss is flat
for the whole run.

ORIGIN: ``cls_head.0`` - the first tower conv, whose ReLU is dead from the first
forward pass (the ones after it are dead for the same reason).

Fix: the prior bias only on the final classification conv, zero bias on the tower
convs (the RetinaNet paper's actual init); same data, model, optimiser and steps.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "cls_head.0"
SOURCE = ("Lin et al. 2017 'Focal Loss for Dense Object Detection' Sec. 4.1 (prior bias only on "
          "the final cls conv; YOLOv5 Detect._initialize_biases does the same); common bug of applying the prior-probability bias in a loop over "
          "all head convs (detectron/mmdet-style init_weights ports); PCB defect detection "
          "(Ding et al. 2019 TDD-net, PKU-Market-PCB).")

N_DEF = 3
PI = 0.01


class DefectDetector(nn.Module):
    def __init__(self, ch, tower):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, ch // 2, 3, stride=2, padding=1), nn.GroupNorm(4, ch // 2), nn.ReLU(),
            nn.Conv2d(ch // 2, ch, 3, stride=2, padding=1), nn.GroupNorm(4, ch), nn.ReLU())
        layers = []
        for _ in range(tower):
            layers += [nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()]
        layers.append(nn.Conv2d(ch, N_DEF, 3, padding=1))
        self.cls_head = nn.Sequential(*layers)

    def forward(self, x):
        return self.cls_head(self.backbone(x))


def _boards(g, n, S=32):
    # copper traces on substrate + defects; label grid at stride 4
    img = 0.1 * torch.randn(n, 1, S, S, generator=g)
    rows = torch.randint(0, S, (n, 3), generator=g)
    for i in range(n):
        for r in rows[i]:
            img[i, 0, r, :] += 1.0
    tgt = torch.zeros(n, N_DEF, S // 4, S // 4)
    nd = torch.randint(1, 4, (n,), generator=g)
    for i in range(n):
        for _ in range(int(nd[i])):
            k = int(torch.randint(0, N_DEF, (1,), generator=g))
            cy, cx = (int(v) for v in torch.randint(2, S - 2, (2,), generator=g))
            if k == 0:    # short / spurious copper: bright blob
                img[i, 0, cy - 1:cy + 2, cx - 1:cx + 2] += 1.5
            elif k == 1:  # missing hole: dark ring
                img[i, 0, cy - 2:cy + 3, cx - 2:cx + 3] -= 1.0
                img[i, 0, cy, cx] += 1.0
            else:         # open: vertical gap pattern
                img[i, 0, cy - 2:cy + 3, cx] -= 1.5
            tgt[i, k, cy // 4, cx // 4] = 1.0
    return img, tgt


def heatmap_bce(logits, target):
    # summed over all cells, normalised by the number of defect cells (detector convention)
    loss = F.binary_cross_entropy_with_logits(logits, target, reduction="sum")
    return loss / target.sum().clamp(min=1.0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    ch = [32, 48, 32][seed % 3]
    tower = [2, 3, 3][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [16, 24, 20][seed % 3]
    steps = 160
    model = DefectDetector(ch, tower)
    prior = -math.log((1 - PI) / PI)
    convs = [m for m in model.cls_head.modules() if isinstance(m, nn.Conv2d)]
    for m in convs:
        nn.init.normal_(m.weight, std=0.01)
        nn.init.constant_(m.bias, prior)
    if fixed:
        for m in convs[:-1]:
            nn.init.zeros_(m.bias)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    batches = [_boards(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=heatmap_bce, batches=batches, steps=steps)
