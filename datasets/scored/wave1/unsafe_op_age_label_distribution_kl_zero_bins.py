"""Age estimation with label-distribution learning (DLDL, Gao et al. 2017): a small CNN maps a face
crop to a softmax over 81 age bins (0..80 years) and is trained with KL(p || q) against a Gaussian
label distribution p centred on the true age (sigma = 4). The KL was hand-written as sum(p * log(p
/ q)). For the adult faces that make up most of the data every bin of p is > 0 in float32 and the
run is calm; but for a child or a very old person the Gaussian tail at the far end of the age axis
is exp(-(k - a)^2 / 32) < 1e-45 and underflows to exactly 0. Then p / q = 0, log(0) = -inf and 0 *
-inf = NaN in the loss, and in backward d log(u)/du = 1/0 = inf times du/dq = 0 gives NaN
gradients that poison every weight: after the first batch with a child the loss is NaN for good.
The fixed run computes the same KL with torch.xlogy(p, p) - p * log q (0 * log 0 := 0); nothing
else changes.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Gao et al. 2017 'Deep Label Distribution Learning with Label Ambiguity' (DLDL) age "
          'estimation; known pattern: hand-written KL p*log(p/q) with zero target entries (torch.xlogy '
          '/ F.kl_div handle 0*log 0)')

NB, SIGMA = 81, 4.0


class AgeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(32, NB)

    def forward(self, x):
        return torch.softmax(self.head(self.features(x).flatten(1)), dim=-1)


def make_loss(safe):
    def loss_fn(q, p):
        if safe:
            return (torch.xlogy(p, p) - p * torch.log(q)).sum(1).mean()
        return (p * torch.log(p / q)).sum(1).mean()
    return loss_fn


def _label_dist(ages):
    k = torch.arange(NB).float()
    p = torch.exp(-(k[None] - ages[:, None]) ** 2 / (2 * SIGMA ** 2))
    return p / p.sum(1, keepdim=True)


def _faces(g, ages, s=16):
    # synthetic "face": wrinkle-like texture whose frequency and contrast grow with age
    ii = torch.arange(s).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    out = []
    for a in ages.tolist():
        f = 0.3 + 1.2 * a / 80.0
        ph = float(torch.rand(1, generator=g)) * 6.28
        img = (0.2 + a / 100.0) * torch.sin(f * xx + 0.3 * yy + ph) + 0.6 - a / 200.0
        out.append(img + 0.1 * torch.randn(s, s, generator=g))
    return torch.stack(out)[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = []
    for b in range(30):
        ages = 25.0 + torch.rand(16, generator=g) * 30.0          # adults: 25-55
        if b == 23:
            ages[4] = 4.0                                          # one child in a later batch
        batches.append((_faces(g, ages), _label_dist(ages)))
    model = AgeNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=make_loss(safe=fixed), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
