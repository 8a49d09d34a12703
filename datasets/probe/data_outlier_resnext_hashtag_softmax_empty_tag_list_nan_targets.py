"""ResNeXt (grouped 3x3 bottleneck convs, cardinality 4-8, BatchNorm) pre-trained on
weakly-labelled hashtag data with a softmax over the tag vocabulary and soft targets
1/k for the k tags of an image (Mahajan et al. 2018, "Exploring the limits of weakly
supervised pretraining").

The corruption: the soft-target rows were computed offline and cached,
`targets = multi_hot / multi_hot.sum(1, keepdim=True)`. After the tag vocabulary was
pruned, a few images of one shard had no surviving tag, so their rows are 0/0 = NaN in
the cache. Nothing looks wrong until that shard is sampled: the soft-target
cross-entropy of that batch is NaN, the backward pass fills every gradient with NaN and
the SGD step writes NaN into every weight, after a healthy first part of the run.

ORIGIN: None -- corrupt target rows in the data, not a module, are the root cause (the
model itself is healthy and every op in it is well defined).

Fix: the images with an empty tag list are dropped from that batch (filter rows with
multi_hot.sum(1) == 0 before caching); the model, optimiser and lr are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Mahajan et al. 2018 (ResNeXt hashtag pre-training, softmax with 1/k soft "
          "targets); Xie et al. 2017 ResNeXt; cached multi-hot label normalisation "
          "producing NaN rows for images whose tag list became empty after pruning.")


class Bottleneck(nn.Module):
    def __init__(self, cin, cout, card, width, stride):
        super().__init__()
        d = card * width
        self.conv1 = nn.Conv2d(cin, d, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(d)
        self.conv2 = nn.Conv2d(d, d, 3, stride=stride, padding=1, groups=card, bias=False)
        self.bn2 = nn.BatchNorm2d(d)
        self.conv3 = nn.Conv2d(d, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        h = self.bn3(self.conv3(h))
        return F.relu(h + (x if self.short is None else self.short(x)))


class ResNeXt(nn.Module):
    def __init__(self, card, width, stages, num_tags):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        blocks, c = [], 16
        for i, (cout, n) in enumerate(stages):
            for j in range(n):
                blocks.append(Bottleneck(c, cout, card, width * (2 ** i), 2 if (j == 0 and i > 0) else 1))
                c = cout
        self.layers = nn.Sequential(*blocks)
        self.fc = nn.Linear(c, num_tags)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1).flatten(1))


def soft_target_ce(logits, targets):
    return -(targets * F.log_softmax(logits, dim=1)).sum(1).mean()


def make_batches(g, steps, bs, num_tags, bad_step, n_bad, fixed):
    protos = torch.randn(num_tags, 3, 4, 4, generator=g)
    out = []
    for i in range(steps):
        multi_hot = (torch.rand(bs, num_tags, generator=g) < 2.5 / num_tags).float()
        multi_hot[torch.arange(bs), torch.randint(0, num_tags, (bs,), generator=g)] = 1.0
        if i == bad_step:
            multi_hot[:n_bad] = 0.0                      # tag list emptied by vocabulary pruning
        imgs = torch.einsum("bt,tchw->bchw", multi_hot, protos)
        imgs = F.interpolate(imgs, size=16, mode="bilinear", align_corners=False)
        imgs = imgs + 0.5 * torch.randn(imgs.shape, generator=g)
        targets = multi_hot / multi_hot.sum(1, keepdim=True)   # cached 1/k soft targets
        if fixed and i == bad_step:
            keep = multi_hot.sum(1) > 0
            imgs, targets = imgs[keep], targets[keep]
        out.append((imgs, targets))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    card = [4, 8, 4][seed % 3]
    width = [4, 2, 4][seed % 3]
    stages = [[(32, 1), (64, 1)], [(32, 1), (48, 1), (64, 1)], [(24, 2), (48, 1)]][seed % 3]
    bs = [16, 24, 12][seed % 3]
    lr = [0.05, 0.08, 0.08][seed % 3]
    steps = [80, 90, 100][seed % 3]
    bad_step = [50, 33, 60][seed % 3]
    n_bad = [2, 3, 1][seed % 3]
    model = ResNeXt(card, width, stages, num_tags=12)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=soft_target_ce,
                batches=make_batches(g, steps, bs, 12, bad_step, n_bad, fixed), steps=steps)
