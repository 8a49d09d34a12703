"""Lorentz Boost Network (LBN)-style ttH(bb) vs ttbb classifier run under fp16 autocast: the
four-vector feature layer squares energies and momenta in GeV in half precision.

Mechanism: the LBN front end linearly combines the event's 8 four-vectors (E, px, py, pz in GeV)
into M learned "particles" (an nn.Linear over the particle axis, which autocast runs in fp16)
and computes Lorentz-invariant features: m^2 = E^2 - |p|^2 and pT^2 of each combination and the
pairwise invariant masses (p_i + p_j)^2 of the inputs, then log-compresses them for the DNN.
Mixed precision (torch.autocast float16) was switched on for speed, with a GradScaler.  Any
energy or pair energy above 256 GeV squares to more than 65504, the fp16 maximum: E^2 is inf,
E^2 - |p|^2 is inf - inf = NaN, and the loss is NaN on the first batch with a hard event.  The
GradScaler cannot help: the overflow is in the forward pass, not in the gradients.

ORIGIN: "lbn", the four-vector feature module: the first inf appears in its E^2 / (p_i+p_j)^2
products (its input combination layer is still finite).

Fix: compute the LBN features in float32 (autocast disabled for that module, inputs cast to
float), keep the rest of the network under fp16 autocast with the GradScaler.  Seeds change
the number of learned combinations, the DNN width, the learning rate and the batch size.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "lbn"
SOURCE = ("Erdmann, Geiser, Rath, Rieger, 'Lorentz Boost Networks' (CSBS 2019, the 'lbn' "
          "package); fp16 max 65504 so squared GeV-scale energies overflow (PyTorch AMP docs: "
          "ops that can overflow should run in float32; NVIDIA mixed-precision guide).")

NP = 8


def _fourvec(pt, eta, phi, m):
    px, py, pz = pt * torch.cos(phi), pt * torch.sin(phi), pt * torch.sinh(eta)
    e = torch.sqrt(px ** 2 + py ** 2 + pz ** 2 + m ** 2)
    return torch.stack([e, px, py, pz], -1)


def _events(n, g):
    y = (torch.rand(n, generator=g) < 0.5).float()
    pt = 30 + torch.empty(n, NP).exponential_(1 / 70.0, generator=g)
    eta = 1.2 * torch.randn(n, NP, generator=g)
    phi = 2 * math.pi * torch.rand(n, NP, generator=g)
    m = 4 + 4 * torch.rand(n, NP, generator=g)
    # signal: jets 0 and 1 come from H -> bb (m_bb ~ 125 GeV): solve pT1 for the target mass
    mh = torch.where(y > 0, 125 + 6 * torch.randn(n, generator=g),
                     torch.exp(math.log(30) + math.log(12) * torch.rand(n, generator=g)))
    phi[:, 1] = phi[:, 0] + (0.4 + 2.6 * torch.rand(n, generator=g))
    k = torch.cosh(eta[:, 0] - eta[:, 1]) - torch.cos(phi[:, 0] - phi[:, 1])
    k = k.clamp_min(mh ** 2 / (2 * pt[:, 0] * 600.0))
    pt[:, 1] = mh ** 2 / (2 * pt[:, 0] * k)
    return _fourvec(pt, eta, phi, m), y


class LBNFeatures(nn.Module):
    def __init__(self, ncomb, fp32):
        super().__init__()
        self.particle_comb = nn.Linear(NP, ncomb, bias=False)
        nn.init.uniform_(self.particle_comb.weight, 0.0, 1.0 / NP * 2)
        self.fp32 = fp32
        self.iu = torch.triu_indices(NP, NP, 1)

    def _features(self, p):
        comb = self.particle_comb(p.transpose(1, 2)).transpose(1, 2)          # (B, M, 4)
        m2 = comb[..., 0] * comb[..., 0] - (comb[..., 1:] * comb[..., 1:]).sum(-1)
        pt2 = comb[..., 1] * comb[..., 1] + comb[..., 2] * comb[..., 2]
        pair = p.unsqueeze(2) + p.unsqueeze(1)                                  # (B, N, N, 4)
        pm2 = pair[..., 0] * pair[..., 0] - (pair[..., 1:] * pair[..., 1:]).sum(-1)
        pm2 = pm2[:, self.iu[0], self.iu[1]]
        return torch.cat([torch.log1p(m2.clamp_min(0)), torch.log1p(pt2),
                          torch.log1p(pm2.clamp_min(0))], 1)

    def forward(self, p):
        if self.fp32:
            with torch.autocast(device_type=p.device.type, enabled=False):
                return self._features(p.float())
        return self._features(p)


class LBNClassifier(nn.Module):
    def __init__(self, ncomb, width, fp32):
        super().__init__()
        self.lbn = LBNFeatures(ncomb, fp32)
        nfeat = 2 * ncomb + NP * (NP - 1) // 2
        self.norm = nn.BatchNorm1d(nfeat)
        self.dnn = nn.Sequential(nn.Linear(nfeat, width), nn.ELU(), nn.Linear(width, width),
                                 nn.ELU(), nn.Linear(width, 1))

    def forward(self, p):
        return self.dnn(self.norm(self.lbn(p))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    ncomb = [10, 12, 16][seed % 3]
    width = [64, 96, 128][seed % 3]
    lr = [3e-3, 4e-3, 3e-3][seed % 3]
    bs = [64, 96, 128][seed % 3]
    steps = 160
    g = torch.Generator().manual_seed(14000 + seed)
    batches = [_events(bs, g) for _ in range(steps)]
    torch.manual_seed(seed)
    model = LBNClassifier(ncomb, width, fp32=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu")
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=scaler)
