"""PointNet classifier (shared per-point MLP as 1x1 conv1d, global max-pool, FC head) ported from a
Caffe prototxt whose every layer uses `weight_filler { type: "gaussian" std: 0.01 }`, reproduced as
nn.init.normal_(w, 0, 0.01) on every conv/linear weight. With fan-ins of 3..128 a std of 0.01 is
10-30x below the He scale, so each layer shrinks the activation scale by ~0.03-0.1: after the five
layers the logits are ~1e-7, all classes get probability 1/K, and the weight gradients (products of
those vanishing activations and back-propagated signals) are equally tiny. SGD with momentum can
only move the last bias, which cannot beat the balanced prior: the cross-entropy sits at ln(K)
for the whole run, no NaN, no explosion. Fix: Kaiming (He) initialisation of the same layers."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "feat.0"
SOURCE = ("Caffe 'gaussian std 0.01' weight fillers carried into PyTorch ports (AlexNet/VGG-era "
          "prototxts); Glorot & Bengio 2010 / He et al. 2015 on vanishing activations with too-small "
          "init; PointNet re-implementation issues 'accuracy stuck at chance'")

K = 5


class PointNetCls(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Sequential(
            nn.Conv1d(3, 32, 1), nn.ReLU(),
            nn.Conv1d(32, 64, 1), nn.ReLU(),
            nn.Conv1d(64, 128, 1), nn.ReLU(),
        )
        self.head = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, K))

    def forward(self, pts):                          # (B, 3, N)
        return self.head(self.feat(pts).amax(-1))


def _init(model, fixed):
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)     # Caffe gaussian filler
            nn.init.zeros_(m.bias)


def _batch(g, n, N=128):
    labs = torch.randint(0, K, (n,), generator=g)
    clouds = []
    for c in labs.tolist():
        u = torch.rand(N, 2, generator=g)
        if c == 0:    # sphere
            v = torch.randn(N, 3, generator=g); p = v / v.norm(dim=1, keepdim=True)
        elif c == 1:  # cube surface
            p = torch.rand(N, 3, generator=g) * 2 - 1
            ax = torch.randint(0, 3, (N,), generator=g)
            p[torch.arange(N), ax] = torch.sign(p[torch.arange(N), ax])
        elif c == 2:  # cylinder
            th = u[:, 0] * 6.283
            p = torch.stack([torch.cos(th), torch.sin(th), u[:, 1] * 2 - 1], 1)
        elif c == 3:  # plane
            p = torch.stack([u[:, 0] * 2 - 1, u[:, 1] * 2 - 1, 0.05 * torch.randn(N, generator=g)], 1)
        else:         # line / pole
            p = torch.stack([0.05 * torch.randn(N, generator=g), 0.05 * torch.randn(N, generator=g), u[:, 0] * 2 - 1], 1)
        p = p * (0.7 + 0.6 * torch.rand(1, generator=g)) + 0.02 * torch.randn(N, 3, generator=g)
        clouds.append(p.T)
    return torch.stack(clouds), labs


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PointNetCls()
    _init(model, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    pool = [_batch(g, 32) for _ in range(10)]
    steps = 120
    batches = [pool[i % len(pool)] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
