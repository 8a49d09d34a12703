"""Deep AutoRec / NVIDIA DeepRec-style collaborative-filtering autoencoder
(Kuchaiev & Ginsburg 2017): a user's sparse rating vector over the item
catalogue goes through a deep SELU encoder/decoder and is trained with masked
MSE (only observed ratings count), SGD with momentum.

Mechanism: the layers are initialised with ``nn.init.normal_(w, std=0.1)``,
a constant taken from a shallow one-hidden-layer AutoRec script (500 units).
In the deep variant the hidden layers are 384-1024 wide, so each layer
multiplies the activation scale by ~0.1*sqrt(fan_in) ~ 2-3 (SELU is linear
on the positive side).  Through 5-6 layers the reconstruction is already ~10-50x
the rating scale at step 0, the masked MSE is ~1e3, the first momentum-SGD steps
apply enormous updates and the loss overflows to inf/NaN within a few steps.

ORIGIN is ``encoder.0``: the first over-scaled Linear; every following layer
multiplies its excess again (geometric growth with depth).

Fix: Xavier-uniform initialisation of all Linear weights (as in DeepRec).
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("NVIDIA DeepRec (Kuchaiev & Ginsburg, 'Training Deep AutoEncoders for "
          "Collaborative Filtering', 2017) with the std=0.1 normal init of a shallow "
          "AutoRec script reused for wide deep layers")


class DeepAutoRec(nn.Module):
    def __init__(self, n_items, hidden):
        super().__init__()
        enc, prev = [], n_items
        for h in hidden:
            enc += [nn.Linear(prev, h), nn.SELU()]
            prev = h
        self.encoder = nn.Sequential(*enc)
        dec = []
        for h in list(reversed(hidden[:-1])) + [n_items]:
            dec += [nn.Linear(prev, h), nn.SELU()]
            prev = h
        dec = dec[:-1]                     # linear output layer
        self.decoder = nn.Sequential(*dec)

    def forward(self, x):
        return self.decoder(self.encoder(x))


def masked_mse(pred, target):
    mask = (target > 0).float()
    return ((pred - target) ** 2 * mask).sum() / mask.sum().clamp_min(1.0)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(items=400, hidden=[512, 512, 1024], bs=64, lr=5e-3, steps=80),
        dict(items=300, hidden=[384, 384, 768], bs=32, lr=5e-3, steps=100),
        dict(items=500, hidden=[512, 512, 512, 128], bs=48, lr=2e-3, steps=70),
    ][seed % 3]
    g = torch.Generator().manual_seed(77 + seed)
    n_users, items = 1200, cfg["items"]
    u = torch.randn(n_users, 6, generator=g)
    v = torch.randn(items, 6, generator=g)
    bias = torch.randn(items, generator=g) * 0.5
    r = (3.2 + 0.5 * (u @ v.T) + bias).round().clamp(1, 5)
    observed = torch.rand(n_users, items, generator=g) < 0.07
    ratings = r * observed

    torch.manual_seed(seed)
    model = DeepAutoRec(items, cfg["hidden"])
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            if fixed:
                nn.init.xavier_uniform_(mod.weight)
            else:
                nn.init.normal_(mod.weight, std=0.1)
            nn.init.zeros_(mod.bias)

    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n_users, (cfg["bs"],), generator=g)
        x = ratings[idx]
        batches.append((x, x))
    return dict(model=model, optimizer=opt, loss_fn=masked_mse, batches=batches, steps=cfg["steps"])
