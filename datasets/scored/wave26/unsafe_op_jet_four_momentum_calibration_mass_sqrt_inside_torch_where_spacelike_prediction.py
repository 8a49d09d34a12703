"""Jet four-momentum calibration network that learns an additive m^2 (pile-up) correction and
takes the mass as torch.where(m2 > 0, sqrt(m2), 0); the run is calm until a prediction for a
massless jet becomes space-like (m2 < 0), when the unselected sqrt branch returns NaN gradients.

Mechanism: the MLP reads reco-jet features (log pT, eta, phi, m/pT, pile-up density rho, ...)
and predicts a log pT scale and an additive correction to m^2 (pile-up adds mass roughly in
quadrature, so the m^2 correction is the natural signed target).  The corrected four-vector is
rebuilt from (p, m) and fitted with an MSE on (E, px, py, pz) plus a mass term.  To "protect"
the square root against space-like predictions the code uses
m = torch.where(m2 > 0, torch.sqrt(m2), 0).  A fifth of the generator jets are single-particle/
photon-like with m_gen = 0 and only pile-up mass at reco level; as the network learns to
subtract it their predicted m2 approaches 0 and, with the batch noise, soon crosses it.  For
those elements torch.where still back-propagates through sqrt(m2): the incoming gradient is 0
but sqrt's backward at a negative argument is NaN, and 0 * NaN = NaN.  Every weight becomes
NaN on that step and the loss is NaN from the next one; before that the loss falls normally.

ORIGIN: None: the unsafe op is the sqrt evaluated inside torch.where in the model's output
assembly, not a layer with parameters; no named module is where it starts.

Fix: a safe square root, m = sqrt(clamp(m2, min=1e-6)) (finite gradient; the clamp zeroes it
for space-like predictions).  Seeds change the width, the depth, the learning rate, the batch
size and the mass-term weight (and with them the step where the NaN appears).
"""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("PyTorch issues on NaN gradients through torch.where with sqrt/log in the unselected "
          "branch (e.g. pytorch/pytorch#15506, #68425; JAX FAQ 'gradients contain NaN where "
          "using where'); jet energy/mass regression with pile-up mass corrections (CMS/ATLAS "
          "DNN jet mass regression).")


def _fourvec(pt, eta, phi, m):
    px, py, pz = pt * torch.cos(phi), pt * torch.sin(phi), pt * torch.sinh(eta)
    return torch.stack([torch.sqrt(px ** 2 + py ** 2 + pz ** 2 + m ** 2), px, py, pz], -1)


def _jets(n, g):
    pt = 0.3 + torch.empty(n).exponential_(1 / 0.4, generator=g)     # units of 100 GeV
    eta = 4.0 * torch.rand(n, generator=g) - 2.0
    phi = 2 * math.pi * torch.rand(n, generator=g)
    massless = torch.rand(n, generator=g) < 0.2
    m = torch.where(massless, torch.zeros(n), 0.05 + 0.3 * torch.rand(n, generator=g))
    gen = _fourvec(pt, eta, phi, m)
    rho = 0.2 + 0.8 * torch.rand(n, generator=g)                     # pile-up density
    resp = 0.75 + 0.08 * eta.abs() - 0.05 * torch.exp(-pt) + 0.02 * torch.randn(n, generator=g)
    pt_r = pt * resp + 0.05 * rho
    m_r = torch.sqrt(m ** 2 + (0.06 * rho + 0.02 * pt) ** 2)          # pile-up mass
    reco = _fourvec(pt_r, eta + 0.01 * torch.randn(n, generator=g), phi, m_r)
    feats = torch.stack([torch.log(pt_r), eta, torch.sin(phi), torch.cos(phi), m_r / pt_r,
                         rho, torch.tanh(eta)], 1)
    return (feats, reco), torch.cat([gen, m.unsqueeze(1)], 1)


class FourMomentumCalib(nn.Module):
    def __init__(self, width, depth, safe):
        super().__init__()
        layers, d = [], 7
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SiLU()]
            d = width
        head = nn.Linear(d, 2)                 # (log pT scale, additive m^2 correction)
        nn.init.zeros_(head.weight)
        nn.init.zeros_(head.bias)
        self.net = nn.Sequential(*layers, head)
        self.safe = safe

    def forward(self, feats, reco):
        corr = self.net(feats)
        p = reco[:, 1:] * torch.exp(corr[:, :1])
        m2 = (reco[:, 0] ** 2 - (reco[:, 1:] ** 2).sum(1)) + 0.002 * corr[:, 1]
        if self.safe:
            m = torch.sqrt(torch.clamp(m2, min=1e-6))
        else:
            m = torch.where(m2 > 0, torch.sqrt(m2), torch.zeros_like(m2))
        e = torch.sqrt((p ** 2).sum(1) + m ** 2)
        return torch.cat([e.unsqueeze(1), p, m.unsqueeze(1)], 1)


def _make_loss(lam):
    def loss_fn(out, target):
        p4 = ((out[:, :4] - target[:, :4]) ** 2).mean()
        return p4 + lam * ((out[:, 4] - target[:, 4]) ** 2).mean()
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    width = [64, 96, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [128, 96, 160][seed % 3]
    lam = [5.0, 10.0, 3.0][seed % 3]
    steps = 200
    g = torch.Generator().manual_seed(15000 + seed)
    batches = [_jets(bs, g) for _ in range(steps)]
    torch.manual_seed(seed)
    model = FourMomentumCalib(width, depth, safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=_make_loss(lam), batches=batches,
                steps=steps)
