"""BN-free VGG-style CNN classifier (conv-relu-pool blocks, Caffe-era recipe, Adam).

Mechanism: images are loaded as float tensors in [0, 1] (ToTensor), but the preprocessing
still subtracts the Caffe per-channel means in 0-255 units (123.68, 116.78, 103.94). Every
pixel therefore carries a huge, almost constant negative shift (~ -115). For the first conv
the shift acts along the all-ones direction of each filter: channels whose weight sum is
positive start dead, and the weight gradient of the others is dominated by the shift, so the
first SGD steps move each filter's weight sum by a large amount; one step in the negative
direction is enough and a dead unit never comes back. Within a few steps every unit of the
first ReLU is off for every pixel, the network outputs a constant and the loss sits flat at
the chance level (it may jump first).
ORIGIN: features.1, the first ReLU, where the units die.
Fix: subtract the means on the same scale as the pixels (mean / 255).
"""
import torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.1"
SOURCE = "Caffe VGG/FCN ports (BGR means 103.94/116.78/123.68) applied after torchvision ToTensor; forum threads 'loss stuck at ln(10), all activations zero'"

MEAN_255 = torch.tensor([123.68, 116.78, 103.94]).view(1, 3, 1, 1)


class VGGSmall(nn.Module):
    def __init__(self, w, ncls):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(2 * w * 4, 64), nn.ReLU(inplace=True), nn.Linear(64, ncls))

    def forward(self, x):
        return self.classifier(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, bs, lr, steps = [(16, 16, 1e-3, 80), (24, 12, 5e-4, 100), (12, 24, 2e-3, 60)][seed % 3]
    ncls, S = 4, 16
    templ = torch.rand(ncls, 3, S, S, generator=g)
    model = VGGSmall(w, ncls)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    mean = MEAN_255 / 255.0 if fixed else MEAN_255
    batches = []
    for _ in range(steps):
        y = torch.randint(0, ncls, (bs,), generator=g)
        img = (0.6 * templ[y] + 0.4 * torch.rand(bs, 3, S, S, generator=g)).clamp(0, 1)
        batches.append((img - mean, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
