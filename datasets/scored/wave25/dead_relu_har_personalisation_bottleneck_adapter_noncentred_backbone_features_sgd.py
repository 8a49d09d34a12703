"""On-device personalisation of a wearable activity-recognition model with a small residual
bottleneck adapter (Houlsby-style: down-projection, ReLU, zero-initialised up-projection).
The backbone and the classification head are frozen (shipped with the app); only the adapter is
trained on the user's own labelled windows, with plain SGD at lr
0.45-0.55 (the rate the on-device head fine-tuning used).

Mechanism: the adapter is inserted after the backbone's last ReLU, so its input features are
all non-negative with a large common mean (~2-3 per feature) - they are not centred (no
LayerNorm before the adapter, unlike in the transformer adapters it was copied from). Each
down-projection unit's pre-activation is dominated by a common-mode term m * sum_j w_ij that is
the same sign for every input: units start either always-on or always-off, and every SGD step
on an alive unit shifts its common mode by an amount proportional to the feature mean. Within
a few dozen steps every bottleneck unit has been pushed negative for every user window, the
ReLU outputs are exactly 0, the up-projection and down-projection get zero gradient and the
model is frozen at the shipped (global) behaviour: the personalisation loss never drops.

ORIGIN: "adapter.down", the Linear feeding the bottleneck ReLU (`adapter.act`) whose units die.

Fix: LeakyReLU(0.1) as the bottleneck non-linearity, so units pushed negative still receive
gradient and come back (same data, lr and steps).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "adapter.down"
SOURCE = ("Houlsby et al. 2019 bottleneck adapters used for on-device personalisation of HAR "
          "models; dying ReLU on non-centred (all-positive) inputs, cs231n 'dying ReLU' and "
          "Lu et al. 2019")


class Adapter(nn.Module):
    def __init__(self, d, r, leaky):
        super().__init__()
        self.down = nn.Linear(d, r)
        self.act = nn.LeakyReLU(0.1) if leaky else nn.ReLU()
        self.up = nn.Linear(r, d)
        nn.init.zeros_(self.up.weight)
        nn.init.zeros_(self.up.bias)

    def forward(self, h):
        return h + self.up(self.act(self.down(h)))


class PersonalisedHAR(nn.Module):
    def __init__(self, n_in, d, r, n_cls, leaky):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(n_in, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU())
        self.adapter = Adapter(d, r, leaky)
        self.head = nn.Linear(d, n_cls)

    def forward(self, x):
        return self.head(self.adapter(self.backbone(x)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [64, 96, 80][seed % 3]
    r = [8, 12, 16][seed % 3]
    lr = [0.5, 0.45, 0.55][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 150
    n_in, n_cls = 12, 6
    model = PersonalisedHAR(n_in, d, r, n_cls, leaky=fixed)
    # 'pretrained' backbone: features with a positive operating point (shipped model)
    with torch.no_grad():
        model.backbone[0].weight.normal_(0, 1.0 / n_in ** 0.5, generator=g)
        model.backbone[0].bias.fill_(1.0)
        model.backbone[2].weight.normal_(0, 1.5 / d ** 0.5, generator=g)
        model.backbone[2].bias.fill_(2.0)
        model.head.weight.normal_(0, 0.3 / d ** 0.5, generator=g)
        model.head.bias.zero_()
        W_user = torch.randn(n_cls, d, generator=g) * 2.0 / d ** 0.5
    for p in list(model.backbone.parameters()) + list(model.head.parameters()):
        p.requires_grad_(False)
    # the user's windows: labels follow a user-specific head on the same features
    with torch.no_grad():
        mu = model.backbone(torch.randn(4096, n_in, generator=g)).mean(0)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n_in, generator=g)
        with torch.no_grad():
            h = model.backbone(x)
            y = ((h - mu) @ W_user.t()).argmax(1)
        batches.append((x, y))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
