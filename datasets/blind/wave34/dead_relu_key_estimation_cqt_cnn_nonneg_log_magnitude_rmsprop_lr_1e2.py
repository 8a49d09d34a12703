"""Global key estimation (24 keys) with a small all-conv CNN on log-compressed CQT patches
(log(1 + 100*|CQT|), non-negative), average pooled over time, dense key classifier,
cross-entropy; RMSprop.

Mechanism: the recipe was moved from Keras SGD (lr 0.01-0.02) to RMSprop and the learning rate
was kept. PyTorch's RMSprop has no bias correction: at step 1 the square average is 0.01*g^2, so
every parameter moves by ~lr/sqrt(0.01) = 10*lr = 0.1-0.2 in the sign of its gradient. Because the
CQT input is non-negative, all the input weights of one conv filter share the sign of their
gradient, so each filter's weights and bias all move by ~0.1-0.2 together: for about half the
filters the pre-activation is pushed below zero for every input patch in one or two steps, and
the ReLUs never fire again (zero gradient); the following layers lose their inputs in the same
way. The loss returns to chance (ln 24) and stays there, finite.

ORIGIN: `net.0`, the first conv whose ReLU units die first (the sign-coherent step on
non-negative inputs happens there); the deeper convs die as their inputs vanish.

Fix: RMSprop with lr 1e-3 (the usual RMSprop default) - nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.0"
SOURCE = ("Dying ReLU after a too-large first adaptive step (Lu et al. 2019 'Dying ReLU and "
          "initialization'; recurring forum reports 'accuracy stuck at chance after switching "
          "to RMSprop'); key CNN after Korzeniowski & Widmer 2017 'End-to-end musical key "
          "estimation using a convolutional neural network'.")


class KeyCNN(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = [nn.Conv2d(1, width, (5, 5), padding=2), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Conv2d(width, width, (3, 3), padding=1), nn.ReLU()]
        layers += [nn.Conv2d(width, 4, 1), nn.ReLU()]
        self.net = nn.Sequential(*layers)
        self.head = nn.Linear(4 * 36, 24)

    def forward(self, x):
        return self.head(self.net(x).mean(dim=3).flatten(1))  # pool over time only


def _batch(g, B):
    y = torch.randint(0, 24, (B,), generator=g)
    tonic = y % 12
    minor = y // 12
    major_prof = torch.tensor([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
    minor_prof = torch.tensor([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])
    prof = torch.stack([torch.roll(torch.where(minor[i] == 1, minor_prof, major_prof), int(tonic[i]))
                        for i in range(B)]) / 6.4
    bins = prof.repeat(1, 3)  # 36 CQT bins, 3 octaves
    T = 16
    act = (torch.rand(B, 36, T, generator=g) < bins[:, :, None] * 0.5).float()
    mag = act * (0.2 + torch.rand(B, 36, T, generator=g)) + 0.02 * torch.rand(B, 36, T, generator=g)
    return torch.log1p(100 * mag).unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(5000 + seed)
    width = [16, 24, 20][seed % 3]
    depth = [3, 2, 3][seed % 3]
    B = [16, 24, 32][seed % 3]
    lr = 1e-3 if fixed else [0.01, 0.02, 0.015][seed % 3]
    steps = 100
    torch.manual_seed(seed)
    model = KeyCNN(width, depth)
    batches = [_batch(g, B) for _ in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
