"""CS231n assignment-2 PyTorch notebook "three-layer ConvNet" (Part III, nn.Sequential) trained on
raw 0..255 CIFAR pixel values because the student dropped T.ToTensor()/T.Normalize from the
transform and built the float tensors straight from the uint8 arrays.

Mechanism
---------
The notebook's model is conv5x5(3->c1) - ReLU - conv3x3(c1->c2) - ReLU - fc(->10) with Kaiming
``random_weight`` init and ``optim.SGD(lr, momentum=0.9, nesterov=True)``.  Kaiming init assumes
unit-scale inputs; with pixels in 0..255 (mean ~120, not centred) every pre-activation of the
first conv is ~100x too large, the logits are in the hundreds and the initial cross-entropy is
100..500 instead of ln(10).  The first Nesterov step is correspondingly enormous: it throws the
conv/fc weights so far that every ReLU of the network is switched off for all inputs and the
loss sits at exactly ln(10) from step 1 on -- a huge loss at step 0 followed by a flat line.

ORIGIN
------
"0" -- the first nn.Conv2d: the first layer that receives the unscaled inputs and produces the
100x pre-activations.

Fix
---
fixed=True applies the notebook's preprocessing, ``(x/255 - mean) / std`` per channel; model,
init, optimizer, data order and lr are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "0"
SOURCE = ("CS231n assignment 2 PyTorch.ipynb Part III three-layer ConvNet (nesterov SGD); classic "
          "'loss stuck at 2.3026 / huge first loss' reports when T.ToTensor()+T.Normalize are skipped")

MEAN = torch.tensor([0.491, 0.482, 0.447]).view(1, 3, 1, 1)
STD = torch.tensor([0.247, 0.243, 0.262]).view(1, 3, 1, 1)


def _cifar_like_uint8(g, bs, side, protos):
    y = torch.randint(0, protos.shape[0], (bs,), generator=g)
    img = protos[y] + 0.35 * torch.randn(bs, 3, side, side, generator=g)
    flip = torch.rand(bs, generator=g) < 0.5
    img[flip] = img[flip].flip(-1)
    img = (img.clamp(0, 1) * 255).round()          # uint8 values as stored in the CIFAR pickles
    return img, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2024 + seed)
    c1, c2 = [(16, 8), (24, 12), (12, 8)][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    side, n_cls, steps = 16, 10, 90

    base = torch.rand(n_cls, 3, side // 4, side // 4, generator=g)
    protos = nn.functional.interpolate(base, size=(side, side), mode="bilinear", align_corners=False)

    batches = []
    for _ in range(steps):
        raw, y = _cifar_like_uint8(g, bs, side, protos)
        if fixed:
            x = (raw / 255.0 - MEAN) / STD             # T.ToTensor() + T.Normalize(mean, std)
        else:
            x = raw                                    # torch.tensor(X_train_uint8).float()
        batches.append((x, y))

    model = nn.Sequential(
        nn.Conv2d(3, c1, kernel_size=5, padding=2), nn.ReLU(),
        nn.Conv2d(c1, c2, kernel_size=3, padding=1), nn.ReLU(),
        nn.Flatten(),
        nn.Linear(c2 * side * side, n_cls))
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight)           # the notebook's random_weight()
            nn.init.zeros_(m.bias)

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
