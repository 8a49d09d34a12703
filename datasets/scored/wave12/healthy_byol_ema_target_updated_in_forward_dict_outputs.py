"""BYOL (Grill et al. 2020) on small images: an online conv encoder + projector + predictor and
a target encoder + projector that receive NO gradients (requires_grad=False, not in the
optimizer) and are updated as an exponential moving average of the online weights (tau=0.99)
at the start of each training forward pass. The model takes a tuple of two augmented views and
returns a dict of online predictions and target projections; the loss is the symmetric
2 - 2*cos between them. Looks alarming to a monitor: half of the model's parameters change
every step without any gradient, the target side's outputs are detached, and the loss is a
bounded (0..8), noisy, non-stationary objective because its target keeps moving. Training still
proceeds normally with AdamW: the loss drops well below its initial value and the target
tracks the online network. Nothing is wrong."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("BYOL (Grill et al., NeurIPS 2020), lucidrains/byol-pytorch EMA target update and "
          "symmetric normalized MSE loss")


def mlp(d_in, d_hidden, d_out):
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.BatchNorm1d(d_hidden), nn.ReLU(), nn.Linear(d_hidden, d_out))


class BYOL(nn.Module):
    def __init__(self, tau=0.99):
        super().__init__()
        self.online_encoder = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.online_projector = mlp(32, 64, 32)
        self.predictor = mlp(32, 64, 32)
        self.target_encoder = copy.deepcopy(self.online_encoder)
        self.target_projector = copy.deepcopy(self.online_projector)
        for p in list(self.target_encoder.parameters()) + list(self.target_projector.parameters()):
            p.requires_grad_(False)
        self.tau = tau

    @torch.no_grad()
    def _ema_update(self):
        for online, target in ((self.online_encoder, self.target_encoder), (self.online_projector, self.target_projector)):
            for po, pt in zip(online.parameters(), target.parameters()):
                pt.mul_(self.tau).add_(po.detach(), alpha=1 - self.tau)

    def forward(self, v1, v2):
        if self.training:
            self._ema_update()
        p1 = self.predictor(self.online_projector(self.online_encoder(v1)))
        p2 = self.predictor(self.online_projector(self.online_encoder(v2)))
        with torch.no_grad():
            z1 = self.target_projector(self.target_encoder(v1))
            z2 = self.target_projector(self.target_encoder(v2))
        return {"p1": p1, "p2": p2, "z1_target": z1, "z2_target": z2}


def byol_loss(out, _unused):
    def reg(p, z):
        return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1)
    return (reg(out["p1"], out["z2_target"]) + reg(out["p2"], out["z1_target"])).mean()


def _views(g, base, n=32, hw=12):
    idx = torch.randint(0, base.shape[0], (n,), generator=g)
    imgs = base[idx]
    def aug():
        dy, dx = torch.randint(0, 5, (2,), generator=g).tolist()
        v = imgs[:, :, dy:dy + hw, dx:dx + hw]
        bright = 0.8 + 0.4 * torch.rand(n, 1, 1, 1, generator=g)
        return v * bright + 0.1 * torch.randn(n, 3, hw, hw, generator=g)
    return (aug(), aug()), torch.zeros(n)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = BYOL()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-3, weight_decay=1e-4)
    base = F.interpolate(torch.rand(64, 3, 4, 4, generator=g), size=(16, 16), mode="bilinear", align_corners=False)
    steps = 150
    batches = [_views(g, base) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=byol_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
