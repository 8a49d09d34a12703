"""A small GoogLeNet (d2l.ai "Multi-Branch Networks" Inception blocks, no batch norm) with the
two auxiliary classifiers of the original paper, trained fast.ai-style with a one-cycle schedule
(``OneCycleLR`` stepped from an optimizer step hook).  Looks alarming, trains fine.

Why it looks broken
-------------------
* fastai's default kaiming-normal init on a BN-free Inception stack gives large initial logits:
  the first losses are 6..12, like a badly initialised network.
* The training loss is ``main + 0.3 * (aux1 + aux2)``: once the logits have shrunk it sits on a
  long plateau at ~1.6 * ln(10) = 3.7 -- above the ln(10) a 10-class classifier "should" sit
  at -- while the one-cycle learning rate ramps up to its peak (a "stuck at chance" pattern).
* Around and after the peak the loss is noisy and non-monotone (0.7 dropout in the auxiliary
  heads, 0.4 in the main head, high lr), with bumps a divergence detector may flag.

Why it is healthy
-----------------
This is the designed behaviour of the auxiliary-loss objective and of one-cycle training: the
large initial logits are corrected in a few steps, the heads leave the plateau as the lr rises,
and during the annealing phase all three heads improve; the total loss ends far below its
start (and well below the plateau).

ORIGIN is None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("d2l.ai 8.4 GoogLeNet (Inception blocks) + auxiliary classifiers of Szegedy et al. 2015, "
          "trained with fast.ai-style fit_one_cycle (torch OneCycleLR)")


class Inception(nn.Module):
    def __init__(self, in_ch, c1, c2, c3, c4):
        super().__init__()
        self.b1_1 = nn.Conv2d(in_ch, c1, kernel_size=1)
        self.b2_1 = nn.Conv2d(in_ch, c2[0], kernel_size=1)
        self.b2_2 = nn.Conv2d(c2[0], c2[1], kernel_size=3, padding=1)
        self.b3_1 = nn.Conv2d(in_ch, c3[0], kernel_size=1)
        self.b3_2 = nn.Conv2d(c3[0], c3[1], kernel_size=5, padding=2)
        self.b4_1 = nn.MaxPool2d(kernel_size=3, stride=1, padding=1)
        self.b4_2 = nn.Conv2d(in_ch, c4, kernel_size=1)

    def forward(self, x):
        b1 = F.relu(self.b1_1(x))
        b2 = F.relu(self.b2_2(F.relu(self.b2_1(x))))
        b3 = F.relu(self.b3_2(F.relu(self.b3_1(x))))
        b4 = F.relu(self.b4_2(self.b4_1(x)))
        return torch.cat((b1, b2, b3, b4), dim=1)


class AuxHead(nn.Module):
    def __init__(self, in_ch, n_cls, hidden):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.conv = nn.Conv2d(in_ch, 32, kernel_size=1)
        self.fc1 = nn.Linear(32 * 4, hidden)
        self.drop = nn.Dropout(0.7)
        self.fc2 = nn.Linear(hidden, n_cls)

    def forward(self, x):
        x = F.relu(self.conv(self.pool(x))).flatten(1)
        return self.fc2(self.drop(F.relu(self.fc1(x))))


class GoogLeNetMini(nn.Module):
    def __init__(self, w, n_cls=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, w, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU())
        c = 2 * w
        self.inc3a = Inception(c, w, (w, 2 * w), (w // 2, w // 2), w // 2)          # -> 4w
        self.inc3b = Inception(4 * w, w, (w, 2 * w), (w // 2, w // 2), w // 2)     # -> 4w
        self.pool3 = nn.MaxPool2d(2)
        self.inc4a = Inception(4 * w, 2 * w, (w, 2 * w), (w // 2, w), w)            # -> 6w
        self.aux1 = AuxHead(6 * w, n_cls, 64)
        self.inc4b = Inception(6 * w, 2 * w, (w, 2 * w), (w // 2, w), w)            # -> 6w
        self.aux2 = AuxHead(6 * w, n_cls, 64)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.4),
                                  nn.Linear(6 * w, n_cls))

    def forward(self, x):
        x = self.pool3(self.inc3b(self.inc3a(self.stem(x))))
        x = self.inc4a(x)
        a1 = self.aux1(x)
        x = self.inc4b(x)
        a2 = self.aux2(x)
        return self.head(x), a1, a2


def _fashion_like(g, n_batches, bs, side, n_cls):
    base = torch.randn(n_cls, 1, side // 4, side // 4, generator=g)
    templ = F.interpolate(base, size=(side, side), mode="bilinear", align_corners=False)
    templ = (templ > 0.3).float() * 0.8
    out = []
    for _ in range(n_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templ[y] * (0.6 + 0.6 * torch.rand(bs, 1, 1, 1, generator=g))
        sh = torch.randint(-2, 3, (2,), generator=g)
        x = torch.roll(x, shifts=(int(sh[0]), int(sh[1])), dims=(2, 3))
        x = x + 0.4 * torch.randn(x.shape, generator=g)
        out.append(((x - 0.3) / 0.6, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    # `fixed` is ignored: nothing is broken.
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1409 + seed)
    w = [8, 12, 8][seed % 3]
    bs = [48, 32, 64][seed % 3]
    max_lr = [4e-3, 3e-3, 5e-3][seed % 3]
    side, n_cls, steps = 16, 10, 100

    model = GoogLeNetMini(w, n_cls)
    for m in model.modules():                      # fastai init_default: kaiming_normal_, zero bias
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight)
            nn.init.zeros_(m.bias)
    batches = _fashion_like(g, steps, bs, side, n_cls)
    optimizer = torch.optim.AdamW(model.parameters(), lr=max_lr, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=max_lr, total_steps=steps + 1,
                                                pct_start=0.3)
    optimizer.register_step_post_hook(lambda opt, args, kwargs: sched.step())

    def loss_fn(outputs, y):
        main, aux1, aux2 = outputs
        return F.cross_entropy(main, y) + 0.3 * (F.cross_entropy(aux1, y) + F.cross_entropy(aux2, y))

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
