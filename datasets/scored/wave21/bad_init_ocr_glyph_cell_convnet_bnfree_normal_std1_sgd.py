"""Fixed-pitch OCR line recogniser (receipt / printer-font style: every character occupies a
4-pixel-wide cell): BN-free Conv2d+ReLU feature extractor, height pooled, one character
classified per cell with cross-entropy; SGD with momentum.  The user's weights_init calls
nn.init.normal_(m.weight) for the convs, i.e. std = 1.0.

Mechanism: each conv multiplies the activation scale by ~sqrt(fan_in/2) (6-9x with 3x3 kernels
and 8-16 channels), so after 4-5 convs the per-cell features are ~1e3-1e5 from step 0, the logits
are enormous and the first SGD steps are enormous: either the weights/loss go to inf/NaN within a
few steps, or the huge step leaves every ReLU of the stack negative and the model is stuck at
the class prior (seed-dependent).
ORIGIN: cnn.0, the first conv whose unit-variance weights start the geometric growth.
Fix: kaiming_normal_(nonlinearity='relu') for the convs; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "cnn.0"
SOURCE = ("weights_init loops with nn.init.normal_(m.weight) (std defaults to 1) in OCR / CRNN "
          "re-implementations; PyTorch forum 'loss is nan after first iteration' threads")


class CellOCR(nn.Module):
    def __init__(self, c, depth, n_classes):
        super().__init__()
        layers = [nn.Conv2d(1, c, 3, padding=1), nn.ReLU()]
        for i in range(depth - 1):
            layers += [nn.Conv2d(c, c, 3, padding=1), nn.ReLU()]
            if i < 2:
                layers.append(nn.MaxPool2d((2, 1)))
        self.cnn = nn.Sequential(*layers)
        self.cell_pool = nn.AvgPool2d((1, 4), stride=(1, 4))
        self.fc = nn.Linear(c, n_classes)

    def forward(self, x):
        f = self.cnn(x).mean(2, keepdim=True)          # (B, C, 1, W)
        f = self.cell_pool(f).squeeze(2).transpose(1, 2)  # (B, L, C)
        return self.fc(f).transpose(1, 2)              # (B, classes, L)


def build(seed: int, fixed: bool = False) -> dict:
    c, depth, lr, bs, L = [(8, 6, 0.03, 8, 6), (12, 5, 0.04, 6, 5), (8, 7, 0.05, 10, 4)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    K = 8
    glyphs = (torch.rand(K, 8, 4, generator=g) > 0.5).float()
    model = CellOCR(c, depth, K)
    for m in model.cnn:
        if isinstance(m, nn.Conv2d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)      # std=1.0: the bug
            nn.init.zeros_(m.bias)
    steps = 80
    batches = []
    for _ in range(steps):
        lab = torch.randint(0, K, (bs, L), generator=g)
        img = glyphs[lab].permute(0, 2, 1, 3).reshape(bs, 1, 8, 4 * L)
        img = img + 0.1 * torch.randn(img.shape, generator=g)
        batches.append((img, lab))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(out, y):
        return F.cross_entropy(out, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
