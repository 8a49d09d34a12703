"""LeNet-5 in its modern form (5x5 conv -> ReLU -> max-pool twice, then 120-84-10 ReLU MLP) trained
with Adam at lr=0.1, the value from the SGD LeNet tutorial it was adapted from. Adam's first updates
move every weight by ~lr regardless of gradient size, i.e. by far more than the typical weight
magnitude of the 150-input conv2 filters (and of fc1). After one overshooting step (a single loss
spike of several hundred) the conv2 filters and biases are pushed so that their pre-activations are
negative at every position of every image: within ~5 steps all 16 conv2 channels output exact zeros,
get zero gradient and never come back, and fc1 behind them dies with them. The logits lose their
input dependence, the network predicts the class prior and the cross-entropy sits at ~log(10) for
the rest of the run with no NaN. The fixed run uses Adam's usual lr=1e-3.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "conv2"
SOURCE = ("PyTorch forum 'LeNet loss stuck at 2.30 with Adam' / 'all outputs the same class' "
          "threads; Karpathy CS231n notes on dying ReLUs with a too-large learning rate")


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def _templates(g):
    # 10 smooth random glyphs on a 20x20 canvas
    t = (torch.rand(10, 1, 10, 10, generator=g) > 0.55).float()
    t = F.interpolate(t, size=(20, 20), mode="bilinear", align_corners=False)
    return t


def _batch(tmpl, g, B):
    y = torch.randint(0, 10, (B,), generator=g)
    img = torch.zeros(B, 1, 28, 28)
    ox = torch.randint(0, 9, (B,), generator=g); oy = torch.randint(0, 9, (B,), generator=g)
    for b in range(B):
        img[b, :, oy[b]:oy[b] + 20, ox[b]:ox[b] + 20] = tmpl[y[b]]
    img = img + 0.3 * torch.randn(B, 1, 28, 28, generator=g)
    return (img - 0.2) / 0.4, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    tmpl = _templates(g)
    model = LeNet5()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 0.1)
    steps, B = 120, 64
    batches = [_batch(tmpl, g, B) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
