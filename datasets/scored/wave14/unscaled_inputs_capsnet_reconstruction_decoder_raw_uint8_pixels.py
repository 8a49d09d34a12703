"""CapsNet with reconstruction regulariser trained on raw 0-255 pixels.

Mechanism: Sabour et al.'s CapsNet: Conv1 (ReLU) -> PrimaryCaps (squash) -> DigitCaps (3
routing iterations); the loss is margin loss + 0.0005 * sum-squared reconstruction error of a
sigmoid FC decoder fed with the label-masked digit capsule.  The user's data pipeline reads
uint8 images and only casts them to float (no ``ToTensor()``-style /255), so Conv1 receives
0-255 inputs and, worse, the reconstruction target is 0-255 while the decoder ends in a
sigmoid.  The reconstruction term is ~1e2-1e3 from step 0 and its floor is (255-1)^2 per lit
pixel: nothing the network can do lowers it appreciably, and the tiny margin-loss signal is
swamped.  The total loss sits at its step-0 value.

ORIGIN is ``conv1``: the first layer that receives the unscaled pixels (the same unscaled
tensor is also used as the reconstruction target).

Fix: scale images to [0, 1] (divide by 255) for both the input and the reconstruction target.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "conv1"
SOURCE = ("Sabour, Frosst & Hinton 2017 CapsNet with reconstruction decoder; common "
          "CapsNet-PyTorch port mistake of feeding uint8 pixels without ToTensor scaling")


def squash(s, dim=-1):
    n2 = (s ** 2).sum(dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)


class PrimaryCaps(nn.Module):
    def __init__(self, c_in, n_maps, caps_dim, kernel, stride):
        super().__init__()
        self.caps_dim = caps_dim
        self.conv = nn.Conv2d(c_in, n_maps * caps_dim, kernel, stride=stride)

    def forward(self, x):
        u = self.conv(x)
        b = u.shape[0]
        u = u.view(b, -1, self.caps_dim, u.shape[-2], u.shape[-1])
        u = u.permute(0, 1, 3, 4, 2).reshape(b, -1, self.caps_dim)
        return squash(u)


class DigitCaps(nn.Module):
    def __init__(self, n_in, d_in, n_out, d_out, iters=3):
        super().__init__()
        self.iters = iters
        self.W = nn.Parameter(0.05 * torch.randn(1, n_in, n_out, d_out, d_in))

    def forward(self, u):  # u: (B, n_in, d_in)
        u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)  # (B, n_in, n_out, d_out)
        logits = torch.zeros(u_hat.shape[:3])
        for i in range(self.iters):
            c = F.softmax(logits, dim=2)
            v = squash((c.unsqueeze(-1) * u_hat).sum(1))
            if i < self.iters - 1:
                logits = logits + (u_hat * v.unsqueeze(1)).sum(-1)
        return v


class CapsNet(nn.Module):
    def __init__(self, ch, n_maps, n_classes, img):
        super().__init__()
        self.n_classes = n_classes
        self.conv1 = nn.Conv2d(1, ch, 5)
        self.relu = nn.ReLU()
        self.primary = PrimaryCaps(ch, n_maps, 8, 5, 2)
        side = ((img - 4) - 5) // 2 + 1
        self.digit = DigitCaps(n_maps * side * side, 8, n_classes, 16)
        self.decoder = nn.Sequential(nn.Linear(16 * n_classes, 128), nn.ReLU(),
                                     nn.Linear(128, 256), nn.ReLU(),
                                     nn.Linear(256, img * img), nn.Sigmoid())

    def forward(self, images, labels):
        v = self.digit(self.primary(self.relu(self.conv1(images))))
        mask = F.one_hot(labels, self.n_classes).unsqueeze(-1).to(v.dtype)
        recon = self.decoder((v * mask).flatten(1))
        return v.norm(dim=-1), recon


def capsule_loss(out, target):
    lengths, recon = out
    labels, images = target
    t = F.one_hot(labels, lengths.shape[1]).float()
    margin = t * F.relu(0.9 - lengths) ** 2 + 0.5 * (1 - t) * F.relu(lengths - 0.1) ** 2
    recon_sse = ((recon - images.flatten(1)) ** 2).sum(1)
    return (margin.sum(1) + 0.0005 * recon_sse).mean()


def make_images(n, img, n_classes, g):
    """uint8 images of bars / diagonals on a noisy background."""
    y = torch.randint(0, n_classes, (n,), generator=g)
    x = (25 * torch.rand(n, 1, img, img, generator=g)).to(torch.uint8)
    r = torch.randint(2, img - 2, (n,), generator=g)
    idx = torch.arange(img)
    for i in range(n):
        k = int(y[i])
        if k == 0:
            x[i, 0, r[i], 1:-1] = 255
        elif k == 1:
            x[i, 0, 1:-1, r[i]] = 255
        elif k == 2:
            x[i, 0, idx, idx] = 255
        else:
            x[i, 0, idx, img - 1 - idx] = 255
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(img=16, ch=32, maps=8, bs=32, lr=1e-3, steps=80),
           dict(img=14, ch=24, maps=6, bs=48, lr=2e-3, steps=70),
           dict(img=18, ch=16, maps=8, bs=24, lr=1e-3, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    model = CapsNet(cfg["ch"], cfg["maps"], 4, cfg["img"])
    batches = []
    for _ in range(cfg["steps"]):
        raw, y = make_images(cfg["bs"], cfg["img"], 4, g)
        x = raw.float() / 255.0 if fixed else raw.float()
        batches.append(((x, y), (y, x)))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=capsule_loss, batches=batches,
                steps=cfg["steps"])
