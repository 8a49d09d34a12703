"""Small ResNet keyword spotter on log-mel patches (stem conv+BN+ReLU, three basic residual blocks,
the last one downsampling with a 1x1 conv+BN shortcut, global average pool, linear). The author
wanted the "zero-init residual" trick of Goyal et al. (gamma = 0 for the LAST BatchNorm of every
residual branch, so each block starts as the identity) but wrote the init loop as "zero the weight
of every BatchNorm2d". That also zeroes the stem BN (and the first BN of every branch and the BN
of the projection shortcut): the stem outputs exactly beta = 0, ReLU(0) = 0, every block then
receives an all-zero tensor, every BN normalises a constant and outputs 0, and the pooled feature
is the zero vector for every clip. No gradient reaches any gamma or conv weight (all paths are
multiplied by a zero gamma or a zero activation), only the head bias learns, so the loss sits at
log(5) forever -- a silent stall with perfectly finite numbers. The fixed run zeroes only bn2 of
each residual branch, as intended; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "stem_bn"
SOURCE = ("Goyal et al. 2017 'Accurate, Large Minibatch SGD' zero-gamma init / torchvision ResNet "
          'zero_init_residual (last BN of each branch only); known pattern: the trick misapplied to '
          'every BatchNorm layer')

K = 5


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.shortcut(x) + self.bn2(self.conv2(h)))


class KWSResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.stem_bn = nn.BatchNorm2d(16)
        self.layer1 = BasicBlock(16, 16, 1)
        self.layer2 = BasicBlock(16, 16, 1)
        self.layer3 = BasicBlock(16, 32, 2)
        self.fc = nn.Linear(32, K)

    def forward(self, x):
        x = torch.relu(self.stem_bn(self.stem(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(x.mean(dim=(2, 3)))


def init_weights(model, only_last_bn_of_branch):
    for name, m in model.named_modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            if only_last_bn_of_branch:
                nn.init.constant_(m.weight, 0.0 if name.endswith("bn2") else 1.0)
            else:
                nn.init.zeros_(m.weight)          # "zero-init gamma" applied to every BN
            nn.init.zeros_(m.bias)


def _make_batch(g, templates, n):
    y = torch.randint(0, K, (n,), generator=g)
    shift = torch.randint(-3, 4, (n,), generator=g)
    x = torch.stack([torch.roll(templates[int(c)], int(s), dims=-1) for c, s in zip(y, shift)])
    return x + 0.5 * torch.randn(x.shape, generator=g), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    # keyword "templates": smooth spectro-temporal blobs on a 20 mel x 24 frame grid
    templates = torch.nn.functional.avg_pool2d(torch.randn(K, 1, 20, 24, generator=g), 3, 1, 1) * 3
    batches = [_make_batch(g, templates, 16) for _ in range(10)]
    model = KWSResNet()
    init_weights(model, only_last_bn_of_branch=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-5)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
