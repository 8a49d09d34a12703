"""Two-head GroupNorm CNN for face attribute estimation (age regression + gender classification, dict
output) on synthetic face-like crops whose wrinkle density and skin tone encode the age. Ages are
standardised with the training mean/std ((age - 47.5) / 19, targets in ~[-1.7, 1.7]). In the batch at step 35, three rows were
scraped from a source that stores the age in *days* (e.g. 25 years -> 9131), so those standardised targets are
~400 instead of ~0. Those few label rows make the age MSE jump by five orders of magnitude and
their gradient, which enters at the age head, throws the head (and, through it, the shared trunk)
far off; with Nesterov momentum the following steps keep overshooting and the loss diverges to inf/NaN.
The images are fine, only the label rows are corrupt. Fix: drop the corrupt label rows from that batch
(filter the outliers)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "age_head"
SOURCE = ("IMDB-WIKI age labels computed from mis-parsed dates of birth (negative / absurd ages reported "
          "by users of the dataset); unit-mixed label rows in scraped attribute datasets")


class FaceAttrNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.GroupNorm(8, 32), nn.ReLU(),
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.GroupNorm(8, 32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.age_head = nn.Linear(32, 1)
        self.gender_head = nn.Linear(32, 2)

    def forward(self, x):
        f = self.trunk(x)
        return {"age": self.age_head(f).squeeze(1), "gender": self.gender_head(f)}


def _faces(g, n, S=24):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, S), torch.linspace(-1, 1, S), indexing="ij")
    age = 15 + 65 * torch.rand(n, generator=g)                      # years
    gender = torch.randint(0, 2, (n,), generator=g)
    a = ((age - 15) / 65)[:, None, None]
    face = (xx ** 2 / 0.6 + yy ** 2 / 0.8 < 1).float()
    freq = 2 + 6 * a
    wrinkles = 0.5 * a * torch.sin(freq * 6 * yy + 2 * torch.pi * torch.rand(n, 1, 1, generator=g))
    hair = (yy < -0.5 - 0.3 * gender[:, None, None].float() * (xx.abs() < 0.8).float()).float()
    tone = 0.5 + 0.3 * torch.rand(n, 1, 1, generator=g)
    r = face * (tone + wrinkles) + 0.8 * hair
    gch = face * (tone * 0.8 - 0.6 * a) + 0.3 * hair * gender[:, None, None]
    b = face * (0.4 + 0.2 * gender[:, None, None]) + 0.1 * hair
    img = torch.stack([r, gch, b], 1) + 0.05 * torch.randn(n, 3, S, S, generator=g)
    return img, age, gender


def loss_fn(out, target):
    return F.mse_loss(out["age"], target["age"]) + F.cross_entropy(out["gender"], target["gender"])


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = FaceAttrNet()
    imgs, age, gender = _faces(g, 384)
    steps, bs, bad_step = 120, 16, 35
    batches = []
    for s in range(steps):
        idx = torch.randint(0, imgs.shape[0], (bs,), generator=g)
        x, a, gd = imgs[idx], age[idx].clone(), gender[idx]
        if s == bad_step:
            a[:3] = a[:3] * 365.25                        # rows whose age was stored in days
            if fixed:
                keep = a < 130                            # drop impossible ages
                x, a, gd = x[keep], a[keep], gd[keep]
        batches.append((x, {"age": (a - 47.5) / 19.0, "gender": gd}))   # standardised age
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
