"""RotNet self-supervised pretext task (predict which of 4 rotations was applied) with a
plain 3-conv ReLU CNN (no BatchNorm) on [0, 1] pixel tensors, SGD with momentum 0.9,
cross-entropy.

Mechanism: the learning rate was copied from a BatchNorm ResNet recipe (0.4-0.5 with
momentum) onto this normalisation-free CNN.  The pixels are ToTensor()-style [0, 1] values
(all positive), so a step moves all incoming weights of a unit the same way for every image.
The net starts to learn, then one over-shooting momentum step (a brief loss spike) drives
the pre-activations of the last conv layer - and most of the middle one - negative for every
input.  A ReLU that is negative for every input has exactly zero gradient and never comes
back: the flattened feature map is constant (all zeros), the logits no longer depend on the
image and the loss sits at log(4) = 1.386 for the rest of the run (no inf or NaN).

ORIGIN: ``features.5`` - the ReLU after the last convolution is the layer that ends up 100%
dead in every seed (features.3 is mostly dead too, features.1 keeps live units); the head
only receives zeros from it.

Fix: a learning rate suited to a BN-free net (1/25 of the copied value).  Same model, init,
data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.5"
SOURCE = ("Gidaris et al. 2018 RotNet pretext task; the classic 'loss stuck at ln(num_classes), "
          "all ReLU activations zero' reports for BN-free CNNs trained with a large SGD lr "
          "(e.g. CS231n dying-ReLU notes, PyTorch forum threads)")


class RotNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Flatten())
        self.fc = nn.Linear(2 * c * 16, 4)

    def forward(self, x):
        return self.fc(self.features(x))


def rotation_ce(logits, rot):
    return F.cross_entropy(logits, rot)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    size = 16
    c = [16, 24, 32][seed % 3]
    bs = [64, 48, 80][seed % 3]
    lr = [0.4, 0.5, 0.45][seed % 3]
    if fixed:
        lr = lr / 25
    steps = 150
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    batches = []
    for _ in range(steps):
        cy, cx = size * torch.rand(2, bs, 1, 1, generator=g)
        # upright "scenes": bright ground at the bottom, a blob somewhere, random gain
        tilt = 0.3 + 0.4 * torch.rand(bs, 1, 1, generator=g)
        img = 0.2 + tilt * (yy / size) + 0.4 * torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 6)
        img = img * (0.8 + 0.4 * torch.rand(bs, 1, 1, generator=g))
        img = (img + 0.05 * torch.randn(bs, size, size, generator=g)).clamp(0, 1)
        rot = torch.randint(0, 4, (bs,), generator=g)
        x = torch.stack([torch.rot90(img[i], int(rot[i]), (0, 1)) for i in range(bs)]).unsqueeze(1)
        batches.append((x, rot))
    model = RotNet(c)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=rotation_ce, batches=batches, steps=steps)
