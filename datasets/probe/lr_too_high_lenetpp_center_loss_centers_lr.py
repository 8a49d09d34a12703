"""Center-loss embedding classifier (Wen et al. 2016, LeNet++ style) whose class centres get a far too high learning rate.

Mechanism: a small conv encoder ("LeNet++": conv-PReLU blocks, a low-dimensional deep feature) feeds a linear
softmax classifier, and a `CenterLoss` module keeps one learnable centre per class.  The joint objective is
CE + lambda * L_C with the paper's summed form L_C = 1/2 * sum_i ||x_i - c_{y_i}||^2 over the mini-batch.  The
centres are put in their own plain-SGD parameter group and the paper's centre rate alpha = 0.5 is used as their
lr.  But the paper's own centre update divides by (1 + n_j); with autograd on the summed loss the gradient on
centre j is lambda * n_j * (c_j - mean x_j), so one step moves c_j by lr * lambda * n_j (~ 2-3 with 20-50
samples of a class per batch and lambda = 0.2) times its distance to the class mean: above the stability limit
of 2.  Each update overshoots the class mean by a growing factor, the centres oscillate with exploding
amplitude, the pull term then drags the encoder features and weights after them, and the loss reaches inf/NaN
after about ten steps.  Update/weight ratios of the centres are O(1) from the first steps.
ORIGIN = "center": the divergence starts in the centre parameters (the module owning them); the encoder
explodes only because it is pulled towards the exploding centres.
Fix: only the centres' learning rate is changed (0.5 -> 0.02, i.e. alpha divided by the expected per-class count),
which makes the centre update a damped moving average of the class means.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = "center"
SOURCE = ("Wen et al., 'A Discriminative Feature Learning Approach for Deep Face Recognition' (ECCV 2016), centre "
          "loss with a separate centre learning rate alpha; common re-implementations (e.g. pytorch-center-loss "
          "issues on centre loss exploding to NaN) where the centre lr is too large for the summed loss.")


class CenterLoss(nn.Module):
    def __init__(self, n_cls, dim):
        super().__init__()
        self.centers = nn.Parameter(torch.randn(n_cls, dim))

    def forward(self, feat, labels):
        return 0.5 * ((feat - self.centers[labels]) ** 2).sum()


class LeNetPP(nn.Module):
    def __init__(self, ch, feat_dim, n_cls):
        super().__init__()
        self.conv1 = nn.Conv2d(1, ch, 3, padding=1)
        self.act1 = nn.PReLU()
        self.conv2 = nn.Conv2d(ch, 2 * ch, 3, padding=1, stride=2)
        self.act2 = nn.PReLU()
        self.pool = nn.AdaptiveAvgPool2d(3)
        self.fc = nn.Linear(18 * ch, feat_dim)
        self.act3 = nn.PReLU()
        self.classifier = nn.Linear(feat_dim, n_cls)
        self.center = CenterLoss(n_cls, feat_dim)

    def forward(self, x, labels):
        h = self.act1(self.conv1(x))
        h = self.act2(self.conv2(h))
        feat = self.act3(self.fc(self.pool(h).flatten(1)))
        return self.classifier(feat), self.center(feat, labels)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    n_cls = 4 + seed % 3
    ch = [6, 8][seed % 2]
    feat_dim = 2 + seed % 2
    bs = [96, 128, 160][seed % 3]
    steps = 100 + 20 * (seed % 3)
    lam = 0.2
    lr_center = 0.02 if fixed else 0.5
    side = 12

    templates = F.avg_pool2d(torch.randn(n_cls, 1, side, side, generator=g), 3, 1, 1) * 2.0
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templates[y] + 0.8 * torch.randn(bs, 1, side, side, generator=g)
        batches.append(((x, y), y))

    model = LeNetPP(ch, feat_dim, n_cls)
    body = [p for n, p in model.named_parameters() if not n.startswith("center.")]
    opt = torch.optim.SGD([
        {"params": body, "lr": 0.005, "momentum": 0.9},
        {"params": model.center.parameters(), "lr": lr_center, "momentum": 0.0},
    ])

    def loss_fn(out, y):
        logits, center_term = out
        return F.cross_entropy(logits, y) + lam * center_term

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
