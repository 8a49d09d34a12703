"""Temporal stream of a two-stream action-recognition network (Simonyan & Zisserman
2014): a CNN-M style ConvNet (7x7/2 conv, 5x5/2 conv, three 3x3 convs, two dropout FC
layers, ReLU, no BatchNorm) whose input is a stack of L optical-flow fields (2L channels:
dx, dy per frame pair, mean-subtracted and scaled).

The paper trains this stream with momentum SGD at lr 1e-2 (batch 256). The
re-implementation linearly scaled that lr for its 5x larger effective batch (0.05) and
then switched the optimiser to torch.optim.Adam without touching the lr.

Mechanism: Adam moves every weight by ~lr per step regardless of its gradient scale,
so with lr 0.05 every update is larger than the weights themselves (default init,
|w| ~ 0.01-0.1). The loss spikes to 100-2000 on step 1, the conv2 pre-activations are
pushed strongly negative and within 3-6 steps the conv2 ReLU outputs exact zeros for
every channel of every clip; the layers above then only see zeros (their ReLUs die
too), no gradient flows back below conv2, and the loss freezes at ~log(K).

ORIGIN: convs.4, the ReLU after conv2 (5x5): the first layer whose units all die
(88-97% after 3 steps, 100% after ~6), which disconnects conv1 from the loss and starves
everything above it.

Fix: lr 1e-3 (an Adam-appropriate lr); nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "convs.4"
SOURCE = ("Simonyan & Zisserman 2014 'Two-Stream Convolutional Networks for Action "
          "Recognition in Videos' (temporal stream, CNN-M-2048, SGD lr 1e-2); "
          "Goyal et al. 2017 linear scaling rule; re-implementations handing the scaled "
          "SGD lr to Adam and reporting the flow stream stuck at chance.")


class TemporalStream(nn.Module):
    def __init__(self, L, w, hidden, num_classes):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(2 * L, w, 7, stride=2, padding=3), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 5, stride=1, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.fc = nn.Sequential(
            nn.Flatten(), nn.Linear(2 * w * 2 * 2, hidden), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(hidden, hidden // 2), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(hidden // 2, num_classes))

    def forward(self, flow_stack):
        return self.fc(self.convs(flow_stack))


def make_batches(g, steps, bs, L, S, num_classes):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, S), torch.linspace(-1, 1, S), indexing="ij")
    # class motion patterns: translations, rotation, zoom in/out
    basis = [(torch.ones_like(xx), torch.zeros_like(xx)), (-torch.ones_like(xx), torch.zeros_like(xx)),
             (torch.zeros_like(xx), torch.ones_like(xx)), (torch.zeros_like(xx), -torch.ones_like(xx)),
             (-yy, xx), (yy, -xx), (xx, yy), (-xx, -yy)][:num_classes]
    out = []
    for _ in range(steps):
        y = torch.randint(0, num_classes, (bs,), generator=g)
        stacks = []
        for b in range(bs):
            fx, fy = basis[int(y[b])]
            cy, cx = (torch.rand(2, generator=g) * 0.6 - 0.3).tolist()
            mask = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 0.3)   # moving actor region
            amp = 0.5 + torch.rand(L, 1, 1, generator=g)
            frames = torch.stack([fx * mask, fy * mask], 0)[None] * amp[:, None]
            stacks.append(frames.reshape(2 * L, S, S))
        x = torch.stack(stacks) + 0.3 * torch.randn(bs, 2 * L, S, S, generator=g)
        out.append((x / 0.5, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    L = [5, 4, 5][seed % 3]
    w = [12, 16, 12][seed % 3]
    hidden = [256, 192, 320][seed % 3]
    K = [8, 6, 8][seed % 3]
    bs = [16, 24, 16][seed % 3]
    steps = [80, 70, 90][seed % 3]
    lr = 1e-3 if fixed else 0.05
    model = TemporalStream(L, w, hidden, K)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=make_batches(g, steps, bs, L, 32, K), steps=steps)
