"""d2l.ai Network-in-Network (NiN) trained from scratch with AlexNet-paper init N(0, 0.01).

Mechanism
---------
d2l's NiN chapter stacks four ``nin_block``s (a k x k conv followed by two 1x1 convs, each with a
ReLU), no batch norm, global average pooling at the end.  The student here trains a small
Fashion-MNIST-sized version with Adam (the d2l SGD lr=0.1 plateaus for too long for them) and,
instead of ``d2l.init_cnn``, uses the init from the AlexNet paper (``nn.init.normal_(m.weight, std=0.01)``, biases zero) -- a popular copy/paste from
AlexNet/VGG tutorials -- gives each of the 12 convolutions a gain of ~0.01*sqrt(fan_in/2) << 1.
The signal shrinks geometrically with depth from step 0: the class maps reaching the global
average pool are ~1e-15, the logits are the (zero) biases, the loss sits at ln(10) and the
gradients of all conv weights are vanishingly small, so nothing trains -- even Adam's
per-parameter normalisation cannot pull twelve layers out of that regime in time.

ORIGIN
------
"0.0" -- the first convolution of the first nin_block: the first badly initialised layer, where
the geometric shrinking starts.

Fix
---
fixed=True uses Kaiming-normal init for the ReLU convs (``nn.init.kaiming_normal_``); same
Adam lr, data and architecture.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "0.0"
SOURCE = ("d2l.ai 8.3 Network in Network (NiN) with the AlexNet-paper N(0,0.01) init instead of "
          "d2l.init_cnn / kaiming; d2l discussion threads 'NiN loss stuck at 2.303'")


def nin_block(in_ch, out_ch, kernel_size, strides, padding):
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, kernel_size, strides, padding), nn.ReLU(),
        nn.Conv2d(out_ch, out_ch, kernel_size=1), nn.ReLU(),
        nn.Conv2d(out_ch, out_ch, kernel_size=1), nn.ReLU())


def _fashion_like(g, n_batches, bs, side, n_cls):
    # 10 smooth class templates ("clothing silhouettes") + per-image shift, contrast and noise
    base = torch.randn(n_cls, 1, side // 4, side // 4, generator=g)
    templ = torch.nn.functional.interpolate(base, size=(side, side), mode="bilinear", align_corners=False)
    templ = (templ > 0.2).float() * 0.8 + 0.1
    out = []
    for _ in range(n_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templ[y].clone()
        sh = torch.randint(-2, 3, (2,), generator=g)
        x = torch.roll(x, shifts=(int(sh[0]), int(sh[1])), dims=(2, 3))
        x = x * (0.7 + 0.6 * torch.rand(bs, 1, 1, 1, generator=g)) + 0.15 * torch.randn(x.shape, generator=g)
        out.append(((x - 0.45) / 0.35, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    c1, c2, c3 = [(12, 24, 32), (16, 24, 40), (12, 16, 24)][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [3e-3, 2.5e-3, 4e-3][seed % 3]
    side, n_cls, steps = 16, 10, 100

    model = nn.Sequential(
        nin_block(1, c1, kernel_size=5, strides=1, padding=2),
        nn.MaxPool2d(3, stride=2),
        nin_block(c1, c2, kernel_size=3, strides=1, padding=1),
        nn.MaxPool2d(3, stride=2),
        nin_block(c2, c3, kernel_size=3, strides=1, padding=1),
        nn.Dropout(0.5),
        nin_block(c3, n_cls, kernel_size=3, strides=1, padding=1),
        nn.AdaptiveAvgPool2d((1, 1)),
        nn.Flatten())

    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, mean=0.0, std=0.01)   # AlexNet-paper init
            nn.init.zeros_(m.bias)

    batches = _fashion_like(g, steps, bs, side, n_cls)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
