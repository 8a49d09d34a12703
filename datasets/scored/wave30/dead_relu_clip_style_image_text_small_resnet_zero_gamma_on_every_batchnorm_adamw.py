"""CLIP-style image-text contrastive pre-training on synthetic captioned images: a small
residual CNN image tower (BatchNorm + ReLU) and an EmbeddingBag text tower, symmetric
InfoNCE with a learnable logit scale, AdamW.

Mechanism: the init routine meant to apply the "zero-init the last BN gamma of each residual
block" trick (Goyal et al. 2017) loops over *every* BatchNorm2d and sets weight = 0 and
bias = 0.  The stem BatchNorm then outputs exactly 0 for every pixel, its ReLU outputs 0,
and PyTorch's ReLU gradient at exactly 0 is 0: the gradients of the stem BN (gamma, beta)
and of every conv below and after it are exactly zero at every step, so the units can
never leave that state - the ReLUs are dead from step 0.  The image embedding is the same
constant vector for every image, so each row of the image-text logit matrix is identical:
the text tower can only learn to flatten it, and the loss stays at log(batch).

ORIGIN: ``image.stem.2`` - the stem ReLU is where the activations become exactly zero and
the gradient stops (the zeroed BN before it produces the zeros, the ReLU is what kills the
gradient path for the whole image tower).

Fix: zero-init only the second BN of each residual block (the intended trick); all other
BN layers keep gamma = 1, beta = 0.  Everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "image.stem.2"
SOURCE = ("Goyal et al. 2017 zero-gamma residual init misapplied to every BatchNorm "
          "(torchvision zero_init_residual re-implemented as a loop over all BN layers); "
          "CLIP (Radford et al. 2021) symmetric InfoNCE")


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(x + self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))


class ImageTower(nn.Module):
    def __init__(self, c, n_blocks, emb):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.Sequential(*[Block(c) for _ in range(n_blocks)])
        self.proj = nn.Linear(c, emb)

    def forward(self, x):
        return self.proj(self.blocks(self.stem(x)).mean((2, 3)))


class CLIPLike(nn.Module):
    def __init__(self, c, n_blocks, vocab, emb):
        super().__init__()
        self.image = ImageTower(c, n_blocks, emb)
        self.text_emb = nn.EmbeddingBag(vocab, 64, mode="mean")
        self.text = nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, emb))
        self.logit_scale = nn.Parameter(torch.tensor(2.659))   # log(1/0.07)

    def forward(self, img, tokens):
        zi = F.normalize(self.image(img), dim=-1)
        zt = F.normalize(self.text(self.text_emb(tokens)), dim=-1)
        return self.logit_scale.exp().clamp(max=100) * zi @ zt.T


def clip_loss(logits, target):
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


COLORS = torch.tensor([[1., .2, .2], [.2, 1., .2], [.2, .2, 1.], [1., 1., .2]])


def _pair(g, bs, size):
    col = torch.randint(0, 4, (bs,), generator=g)
    pat = torch.randint(0, 4, (bs,), generator=g)
    pos = torch.randint(0, 4, (bs,), generator=g)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    ang = pat.float().view(bs, 1, 1) * 0.785
    stripes = 0.5 + 0.5 * torch.sin(1.5 * (xx * torch.cos(ang) + yy * torch.sin(ang)))
    cy = (pos // 2).float().view(bs, 1, 1) * size / 2 + size / 4
    cx = (pos % 2).float().view(bs, 1, 1) * size / 2 + size / 4
    blob = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 5)
    img = (0.3 * stripes + blob).unsqueeze(1) * COLORS[col].view(bs, 3, 1, 1)
    img = img + 0.1 * torch.randn(img.shape, generator=g)
    noise_words = torch.randint(12, 40, (bs, 2), generator=g)
    tokens = torch.cat([col.view(bs, 1), 4 + pat.view(bs, 1), 8 + pos.view(bs, 1), noise_words], 1)
    perm = torch.argsort(torch.rand(bs, 5, generator=g), 1)
    return (img - 0.3) / 0.3, torch.gather(tokens, 1, perm)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    c = [16, 24, 16][seed % 3]
    n_blocks = [1, 2, 2][seed % 3]
    emb = [32, 48, 64][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [2e-3, 1e-3, 1.5e-3][seed % 3]
    steps = 100
    size = 12
    model = CLIPLike(c, n_blocks, 40, emb)
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d):
            if (not fixed) or name.endswith("bn2"):
                nn.init.zeros_(m.weight)
                nn.init.zeros_(m.bias)
    batches = []
    for _ in range(steps):
        img, tok = _pair(g, bs, size)
        batches.append(((img, tok), torch.arange(bs)))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    return dict(model=model, optimizer=opt, loss_fn=clip_loss, batches=batches, steps=steps)
