"""Healthy run: bone-age assessment from hand X-rays (RSNA Bone Age style) with a small
ResNet (BatchNorm, basic blocks, global average pooling) and a heteroscedastic head that
predicts both the (z-scored) bone age and its log-variance, trained with
``nn.GaussianNLLLoss`` (full=False) and AdamW.

Why it looks alarming but is fine: the Gaussian NLL is not bounded below by 0 -- once the
mean error is small the model shrinks the predicted variance and the loss crosses zero and
keeps going NEGATIVE (around -0.3, dipping to -0.65, here), with occasional upward jumps on batches containing
hard (mis-predicted) cases, where a confident small variance is penalised. A negative,
still-falling loss and per-batch spikes are exactly what a correct heteroscedastic
regression looks like; the mean error keeps improving.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("RSNA Pediatric Bone Age challenge baselines with aleatoric-uncertainty heads "
          "(Kendall & Gal 2017 heteroscedastic regression); 'negative loss' forum questions "
          "for GaussianNLLLoss")


class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.short = (nn.Identity() if stride == 1 and c_in == c_out else
                      nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out)))

    def forward(self, x):
        return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))) + self.short(x))


class BoneAgeNet(nn.Module):
    def __init__(self, width, blocks):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, 5, 2, 2, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        layers, c = [], width
        for i, n in enumerate(blocks):
            for j in range(n):
                c_out = width * 2 ** i
                layers.append(BasicBlock(c, c_out, 2 if (j == 0 and i > 0) else 1))
                c = c_out
        self.layers = nn.Sequential(*layers)
        self.sex_embed = nn.Linear(1, 8)                  # sex is an input in bone-age models
        self.head = nn.Sequential(nn.Linear(c + 8, 32), nn.ReLU(), nn.Linear(32, 2))

    def forward(self, img, sex):
        f = F.adaptive_avg_pool2d(self.layers(self.stem(img)), 1).flatten(1)
        out = self.head(torch.cat([f, F.relu(self.sex_embed(sex))], 1))
        return out[:, 0], out[:, 1]                       # mean, log-variance


def make_batch(g, bs, size, hard_frac):
    """Synthetic hand radiograph: phalanx 'bones' whose length and epiphyseal gap depend on
    age; a fraction of hard cases has an age label inconsistent with the image (delayed
    maturation)."""
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    imgs, ages, sexes = [], [], []
    for _ in range(bs):
        age = float(torch.rand(1, generator=g))           # 0..1  ~ 0..19 years
        sex = float(torch.randint(0, 2, (1,), generator=g))
        img = 0.1 + 0.03 * torch.randn(size, size, generator=g)
        for f in range(4):
            cx = 0.2 + 0.2 * f + 0.02 * float(torch.randn(1, generator=g))
            length = 0.3 + 0.4 * age
            gap = 0.08 * (1 - age)
            shaft = ((xx - cx).abs() < 0.035) & (yy > 0.9 - length) & (yy < 0.9)
            epi = ((xx - cx).abs() < 0.04) & (yy > 0.9 - length - gap - 0.06) & (yy < 0.9 - length - gap)
            img = img + 0.6 * shaft.float() + 0.5 * epi.float()
        label = age + 0.03 * float(torch.randn(1, generator=g)) + 0.04 * sex
        if float(torch.rand(1, generator=g)) < hard_frac:
            label = label + 0.35 * float(torch.randn(1, generator=g))
        imgs.append(img)
        ages.append(label)
        sexes.append(sex)
    ages = torch.tensor(ages)
    return (torch.stack(imgs)[:, None], torch.tensor(sexes)[:, None]), (ages - 0.5) / 0.29


class NLL(nn.Module):
    def __init__(self):
        super().__init__()
        self.nll = nn.GaussianNLLLoss(full=False, eps=1e-6)

    def forward(self, out, target):
        mean, logvar = out
        return self.nll(mean, target, logvar.exp())


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(width=8, blocks=(1, 1, 1), lr=2e-3, bs=16, size=48, steps=120, hard=0.05),
        dict(width=12, blocks=(2, 1, 1), lr=1e-3, bs=12, size=48, steps=140, hard=0.10),
        dict(width=8, blocks=(1, 2, 2), lr=3e-3, bs=24, size=40, steps=100, hard=0.08),
    ][seed % 3]
    torch.manual_seed(seed)
    model = BoneAgeNet(cfg["width"], cfg["blocks"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=1e-4)
    g = torch.Generator().manual_seed(400 + seed)
    batches = [make_batch(g, cfg["bs"], cfg["size"], cfg["hard"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=NLL(), batches=batches, steps=cfg["steps"])
