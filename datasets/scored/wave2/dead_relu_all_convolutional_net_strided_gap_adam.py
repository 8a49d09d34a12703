"""All-Convolutional Net (Springenberg et al., 'Striving for Simplicity'): only convolutions,
a strided conv instead of max-pooling, a 1x1 class conv and global average pooling, no
BatchNorm. Trained with Adam at lr 0.08-0.12 (an SGD-style learning rate pasted into an Adam
config). Adam moves every weight and bias by ~lr in the first steps, which for 3x3 conv weights of
magnitude ~0.1 pushes the pre-activations of the ReLU layers negative for every pixel of every
image: 90-100% of the channels of conv1 (and most of the later ones) die, the class map becomes a
constant, no gradient flows back through the zeroed ReLUs, and the cross-entropy plateaus at
~log(4) for the rest of the run without any NaN. Fixed: lr 2e-3 (the units never die), nothing
else."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.1"
SOURCE = "Springenberg et al. 2015 All-CNN; Karpathy CS231n notes on dying ReLUs ('as much as 40% of your network can be dead' with a too-high learning rate)"


class AllConvNet(nn.Module):
    def __init__(self, width, n_cls):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
        self.class_conv = nn.Conv2d(width, n_cls, 1)

    def forward(self, x):
        return self.class_conv(self.features(x)).mean((2, 3))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(16000 + seed)
    width = [24, 32, 20][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = [80, 100, 90][seed % 3]
    lr = 2e-3 if fixed else [0.12, 0.1, 0.08][seed % 3]
    S = 12
    ii, jj = torch.meshgrid(torch.arange(S), torch.arange(S), indexing="ij")
    textures = torch.stack([(ii % 4 == 0), (jj % 4 == 0), ((ii + jj) % 4 == 0), ((ii - jj) % 4 == 0)]).float()
    def make(n):
        y = torch.randint(0, 4, (n,), generator=g)
        x = 0.45 + 0.25 * torch.rand(n, 3, S, S, generator=g) + 0.3 * textures[y].unsqueeze(1)
        return x.clamp(0, 1), y
    pool = [make(bs) for _ in range(20)]
    batches = [pool[i % 20] for i in range(steps)]
    model = AllConvNet(width, 4)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
