"""A small ResNet trained as pytorch/examples imagenet/main.py trains torchvision's models:
ResNet-18 (BasicBlocks [2, 2, 2, 2], torchvision's init), CrossEntropyLoss, SGD (lr 0.1, momentum
0.9, weight decay 1e-4), shuffled batches. Changes: synthetic 3 x 32 x 32 images of 10 classes
(640: 20 steps an epoch at batch 32) normalised by their mean and std, the ResNet at a quarter of
torchvision's width (16 channels first), batch 32 (the example's 256), no lr schedule (its StepLR
decays every 30 epochs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from ._data import digits
from ._resnet import resnet18

NAME = "resnet"
EXPECT = "healthy"
STEPS = 60
EXAMPLE = "imagenet/main.py (resnet18)"


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(1)
    x, y = digits(640, seed=108, channels=3, size=32)
    x = (x - x.mean(dim=(0, 2, 3), keepdim=True)) / x.std(dim=(0, 2, 3), keepdim=True)
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                               batch_size=32, shuffle=True)
    model = resnet18(num_classes=10, width=16)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    losses: list[float] = []
    with dbg_factory(model) as dbg:
        while len(losses) < steps:  # epochs
            model.train()
            for images, target in train_loader:
                output = model(images)
                loss = criterion(output, target)
                optimizer.zero_grad()
                loss.backward()
                dbg.record_loss(loss)
                optimizer.step()
                losses.append(loss.item())
                if len(losses) == steps:
                    break
    return losses
