"""GQ-CNN-style grasp-quality network (Dex-Net 2.0): a small CNN over a depth-image patch
centred on the grasp plus the gripper depth as a second input branch, ending in
nn.Sigmoid(); the user wrote the binary cross-entropy by hand:
    loss = -(y * log(p) + (1 - y) * log(1 - p)).mean()

Mechanism: the task is nearly separable, so the logits of confident positives grow past
~17 within a few dozen Adam steps; float32 sigmoid then rounds to exactly 1.0, log(1 - p)
is log(0) = -inf, and (1 - y) * log(1 - p) = 0 * -inf = NaN for those positives - the loss
turns NaN in a run that was converging calmly.
ORIGIN: the output Sigmoid (head.3), whose saturated output feeds the unsafe log.
Fix: clamp p to [eps, 1 - eps] before the logs (eps = 1e-6).
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "head.3"
SOURCE = "Dex-Net / GQ-CNN PyTorch ports and many 'BCE loss nan' forum threads: manual -(y*log(p)+(1-y)*log(1-p)) after sigmoid gives nan once sigmoid saturates to 1.0"


class GQCNN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.im = nn.Sequential(nn.Conv2d(1, c, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                                nn.Conv2d(c, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())
        self.z = nn.Sequential(nn.Linear(1, 16), nn.ReLU())
        self.head = nn.Sequential(nn.LazyLinear(64), nn.ReLU(), nn.Linear(64, 1), nn.Sigmoid())

    def forward(self, depth, z):
        return self.head(torch.cat([self.im(depth), self.z(z)], 1)).squeeze(-1)


def _batch(g, B, S):
    y = (torch.rand(B, generator=g) < 0.5).float()
    depth = torch.rand(B, 1, S, S, generator=g) * 0.05 + 0.6
    # successful grasps: object bump centred in the patch between the jaws
    c = S // 2
    bump = torch.zeros(1, 1, S, S)
    bump[..., c - 2:c + 2, c - 2:c + 2] = -0.3
    off = torch.zeros(1, 1, S, S)
    off[..., 1:5, 1:5] = -0.3
    depth = depth + y.view(B, 1, 1, 1) * bump + (1 - y).view(B, 1, 1, 1) * off
    z = 0.3 + 0.05 * torch.randn(B, 1, generator=g)
    x = ((depth - 0.6) / 0.1, (z - 0.3) / 0.05)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    c, lr, B, S = [(16, 3e-3, 16, 16), (8, 5e-3, 12, 16), (16, 2e-3, 24, 12)][seed % 3]
    torch.manual_seed(seed)
    model = GQCNN(c)
    model(torch.zeros(1, 1, S, S), torch.zeros(1, 1))
    g = torch.Generator().manual_seed(8000 + seed)
    steps = 120
    batches = [_batch(g, B, S) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def manual_bce(p, y):
        if fixed:
            p = p.clamp(1e-6, 1 - 1e-6)
        return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()

    return dict(model=model, optimizer=opt, loss_fn=manual_bce, batches=batches, steps=steps)
