"""VGGish-style audio event classifier (conv3x3+ReLU stacks without BatchNorm, FC embedding head) on log-mel patches.

VGGish (torchvggish) has no normalisation layers, so every conv after the first sees non-negative
post-ReLU inputs. Trained from scratch with Adam at lr=2e-2 and no warmup, the first sign-like Adam
steps move all weights of a filter the same way (inputs are all >= 0), so whole filters are pushed
below zero for every input; by step ~5-25 the second conv layer is (almost) entirely dead, no gradient reaches
anything below it and the loss sits flat at log(8) without ever diverging. fixed=True trains with
lr=1e-3 (same data, model and init).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.4"
SOURCE = ("harritaylor/torchvggish / tensorflow models/research/audioset/vggish (conv+ReLU, no BN) "
          "trained from scratch; 'dying ReLU' with Adam at a high lr (Lu et al. 2019 'Dying ReLU and "
          "initialization'; CS231n notes: 'with a high learning rate ... 40% of your network can be dead'), "
          "fixed by lowering the lr")

N_CLASSES = 8


class VGGishSmall(nn.Module):
    def __init__(self):
        super().__init__()
        def act():
            return nn.ReLU(inplace=True)

        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), act(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), act(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), act(),
            nn.Conv2d(64, 64, 3, padding=1), act(), nn.MaxPool2d(2),
        )
        self.embeddings = nn.Sequential(
            nn.Linear(64 * 4 * 4, 128), act(),
            nn.Linear(128, 128), act(),
        )
        self.classifier = nn.Linear(128, N_CLASSES)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x.transpose(1, 3).transpose(1, 2), 1)   # torchvggish flattens NHWC
        return self.classifier(self.embeddings(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = VGGishSmall()
    # synthetic 32-frame x 32-mel log-mel patches: each event class is a smooth spectro-temporal
    # template (onset/band structure) plus background noise; patches are roughly zero-mean, unit-var
    templates = F.avg_pool2d(torch.randn(N_CLASSES, 1, 32, 32, generator=g), 5, 1, 2) * 3.0
    steps, bs = 100, 32
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLASSES, (bs,), generator=g)
        shift = torch.randint(-2, 3, (1,), generator=g).item()
        x = torch.roll(templates[y], shifts=shift, dims=2) + torch.randn(bs, 1, 32, 32, generator=g)
        batches.append((x, y))
    lr = 1e-3 if fixed else 2e-2     # the too-aggressive from-scratch lr kills the ReLUs
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
