"""pytorch/examples dcgan/main.py: the DCGAN generator and discriminator (64 x 64 images, one
channel as with --dataset mnist), their weights_init, BCELoss, two Adam optimizers (lr 2e-4,
betas (0.5, 0.999)); each iteration a D step on a real and a fake batch, then a G step. Changes:
synthetic digits resized to 64 x 64 and normalised to [-1, 1] (1024 images), and the example's
size options --nz 16 --ngf 8 --ndf 8 --batchSize 32 (CPU time).

Monitored: the generator, with errG recorded once per optimizerG step: the generator is what a
DCGAN run is for. The discriminator and its optimizer run as in the example, unmonitored."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn, optim

from ._data import digits

NAME = "dcgan"
EXPECT = "healthy"
STEPS = 100
EXAMPLE = "dcgan/main.py"

nz, ngf, ndf, nc = 16, 8, 8, 1


def weights_init(m: nn.Module) -> None:
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 8),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 4),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self.main(input).view(-1, 1).squeeze(1)


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    random.seed(999)
    torch.manual_seed(999)  # the example's --manualSeed
    x, _ = digits(1024, seed=104)
    x = F.interpolate(x, size=(64, 64), mode="bilinear", align_corners=False)
    x = (x - 0.5) / 0.5  # transforms.Normalize((0.5,), (0.5,))
    dataloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x), batch_size=32,
                                             shuffle=True)
    netG = Generator()
    netG.apply(weights_init)
    netD = Discriminator()
    netD.apply(weights_init)
    criterion = nn.BCELoss()
    fixed_noise = torch.randn(32, nz, 1, 1)
    real_label, fake_label = 1, 0
    optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    losses: list[float] = []
    with dbg_factory(netG) as dbg:
        while len(losses) < steps:  # epochs
            for i, data in enumerate(dataloader):
                # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
                netD.zero_grad()
                real_cpu = data[0]
                batch_size = real_cpu.size(0)
                label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype)
                output = netD(real_cpu)
                errD_real = criterion(output, label)
                errD_real.backward()
                noise = torch.randn(batch_size, nz, 1, 1)
                fake = netG(noise)
                label.fill_(fake_label)
                output = netD(fake.detach())
                errD_fake = criterion(output, label)
                errD_fake.backward()
                optimizerD.step()
                # (2) Update G network: maximize log(D(G(z)))
                netG.zero_grad()
                label.fill_(real_label)  # fake labels are real for generator cost
                output = netD(fake)
                errG = criterion(output, label)
                errG.backward()
                dbg.record_loss(errG)
                optimizerG.step()
                losses.append(errG.item())
                if i % 100 == 0:  # the example saves these as images (a forward with grad on)
                    fake = netG(fixed_noise)
                if len(losses) == steps:
                    break
    return losses
