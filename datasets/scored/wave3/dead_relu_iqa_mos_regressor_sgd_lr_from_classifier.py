"""No-reference image-quality (IQA) regressor: a small conv backbone with global average pooling,
then a ReLU hidden layer (`fc1`) and a linear output predicting the mean-opinion score (MOS, 1-5).
The output bias is initialised to the mean MOS, as usual. With the SGD+momentum lr copied from a
classification recipe, the first updates overshoot; the oscillating output error produces large
same-signed gradients on `fc1` that push every `fc1` pre-activation below zero for every image. From then on all fc1 ReLUs are
dead, no gradient reaches the backbone or fc1, and only the output bias learns: the loss settles at
the MOS variance and stays there, with no non-finite value. ORIGIN is fc1, whose ReLUs die.
Fix: a smaller lr."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "fc1"
SOURCE = "dying-ReLU after a large first SGD step in regression heads (Lu et al. 2019 'Dying ReLU'; IQA regressors trained with classification lr)"

class IQANet(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.fc1 = nn.Linear(c, hidden)
        self.relu = nn.ReLU()
        self.out = nn.Linear(hidden, 1)
        nn.init.constant_(self.out.bias, 3.0)     # mean MOS
    def forward(self, x):
        h = F.relu(self.conv2(F.relu(self.conv1(x)))).mean((2, 3))
        return self.out(self.relu(self.fc1(h))).squeeze(-1)

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9000 + seed)
    cfg = [dict(c=16, hidden=32, bs=16, s=24, lr=0.5, steps=100),
           dict(c=24, hidden=16, bs=12, s=20, lr=0.3, steps=80),
           dict(c=12, hidden=48, bs=20, s=28, lr=0.8, steps=120)][seed % 3]
    lr = 0.02 if fixed else cfg["lr"]
    def batch():
        noise = torch.rand(cfg["bs"], generator=g)         # distortion level
        base = torch.rand(cfg["bs"], 3, cfg["s"] // 4, cfg["s"] // 4, generator=g)
        img = F.interpolate(base, size=(cfg["s"], cfg["s"]), mode="bilinear", align_corners=False)
        img = img + noise.view(-1, 1, 1, 1) * torch.randn(img.shape, generator=g)
        mos = 1.0 + 4.0 * (1 - noise)
        return img, mos
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    model = IQANet(cfg["c"], cfg["hidden"])
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=cfg["steps"],
                amp_dtype=None, scaler=None)
