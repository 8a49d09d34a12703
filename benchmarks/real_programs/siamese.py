"""pytorch/examples siamese_network/main.py: a ResNet-18 feature extractor (first conv replaced
for one channel, its fc dropped) applied to both images, the features concatenated into two
linear layers and a sigmoid; BCELoss on same / different class; Adadelta (lr 1.0), StepLR (gamma
0.7 per epoch). The pairs are drawn as the example's APP_MATCHER draws them, from the raw pixel
values (0-255 floats: the example does not normalise). Changes: synthetic digits (STEPS x 32 images:
the default run is one epoch), the ResNet-18 at a quarter of torchvision's width (16 channels
first, not 64), batch 32 instead of 64 (CPU time), python's random seeded."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import torch
from torch import nn, optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import Dataset

from ._data import digits
from ._resnet import resnet18

NAME = "siamese"
EXPECT = "healthy"
STEPS = 60
EXAMPLE = "siamese_network/main.py"


class SiameseNetwork(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        resnet = resnet18(width=16)
        resnet.conv1 = nn.Conv2d(1, 16, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3),
                                 bias=False)
        self.fc_in_features = resnet.fc.in_features
        self.resnet = torch.nn.Sequential(*(list(resnet.children())[:-1]))
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 256),
            nn.ReLU(inplace=True),
            nn.Linear(256, 1),
        )
        self.sigmoid = nn.Sigmoid()
        self.resnet.apply(self.init_weights)
        self.fc.apply(self.init_weights)

    def init_weights(self, m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x: torch.Tensor) -> torch.Tensor:
        output = self.resnet(x)
        return output.view(output.size()[0], -1)

    def forward(self, input1: torch.Tensor, input2: torch.Tensor) -> torch.Tensor:
        output = torch.cat((self.forward_once(input1), self.forward_once(input2)), 1)
        output = self.fc(output)
        return self.sigmoid(output)


class AppMatcher(Dataset):
    """APP_MATCHER over in-memory images: even indices a pair of one class, odd two classes."""

    def __init__(self, data: torch.Tensor, targets: torch.Tensor) -> None:
        self.data = data
        self.grouped_examples = {i: torch.nonzero(targets == i).flatten().tolist()
                                 for i in range(10)}

    def __len__(self) -> int:
        return self.data.shape[0]

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        selected_class = random.randint(0, 9)
        group = self.grouped_examples[selected_class]
        random_index_1 = random.randint(0, len(group) - 1)
        image_1 = self.data[group[random_index_1]].clone().float()
        if index % 2 == 0:
            random_index_2 = random.randint(0, len(group) - 1)
            while random_index_2 == random_index_1:
                random_index_2 = random.randint(0, len(group) - 1)
            image_2 = self.data[group[random_index_2]].clone().float()
            target = torch.tensor(1, dtype=torch.float)
        else:
            other_selected_class = random.randint(0, 9)
            while other_selected_class == selected_class:
                other_selected_class = random.randint(0, 9)
            other = self.grouped_examples[other_selected_class]
            image_2 = self.data[other[random.randint(0, len(other) - 1)]].clone().float()
            target = torch.tensor(0, dtype=torch.float)
        return image_1, image_2, target


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    random.seed(1)
    torch.manual_seed(1)
    x, y = digits(STEPS * 32, seed=105)
    pixels = (x * 255).round().to(torch.uint8)  # MNIST's data: uint8 0-255
    loader = torch.utils.data.DataLoader(AppMatcher(pixels, y), batch_size=32)
    model = SiameseNetwork()
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    criterion = nn.BCELoss()
    losses: list[float] = []
    with dbg_factory(model) as dbg:
        while len(losses) < steps:
            model.train()
            for images_1, images_2, targets in loader:
                optimizer.zero_grad()
                outputs = model(images_1, images_2).squeeze()
                loss = criterion(outputs, targets)
                loss.backward()
                dbg.record_loss(loss)
                optimizer.step()
                losses.append(loss.item())
                if len(losses) == steps:
                    break
            scheduler.step()
    return losses
