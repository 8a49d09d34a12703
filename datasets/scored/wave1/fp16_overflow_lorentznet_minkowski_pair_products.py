"""LorentzNet-style jet tagger (Gong et al. 2022) separating boosted top jets from QCD jets using
the constituents' raw four-momenta in GeV. As in LorentzNet, the edge network is fed the
Lorentz invariants <p_i, p_j> (Minkowski inner products) and <p_i - p_j, p_i - p_j>, compressed
with psi(x) = sign(x) log(1 + |x|), so raw GeV-scale inputs are intended and harmless in float32.
The run uses float16 autocast: the Gram matrix p eta p^T is a matmul, so autocast runs it in half
precision and the invariants stay fp16. For two hard constituents in different prongs of the
hardest top jets the pair invariant reaches 3-5e4 GeV^2, and the squared pair mass
<p_i - p_j, p_i - p_j> = 2 <p_i, p_j> then exceeds 65504: it becomes inf before psi can compress
it, the edge MLP turns inf into NaN, and the loss is NaN as soon as such a jet shows up (within
the first ~30 steps). The fixed run only computes the Minkowski Gram matrix in float32 (autocast
disabled for that op); the rest of the network still runs in float16."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "minkowski"
SOURCE = ("Gong et al. 2022 LorentzNet (psi-normalised Minkowski inner products of raw four-momenta); "
          "fp16 overflow of GeV^2 invariants under AMP")


def psi(x):
    return torch.sign(x) * torch.log1p(x.abs())


class MinkowskiGram(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32
        self.register_buffer("eta", torch.tensor([1.0, -1.0, -1.0, -1.0]))

    def _gram(self, p):
        dots = (p * self.eta) @ p.transpose(1, 2)                  # <p_i, p_j>
        norms = torch.diagonal(dots, dim1=1, dim2=2)
        sq = norms[:, :, None] + norms[:, None, :] - 2 * dots      # <p_i - p_j, p_i - p_j>
        return torch.stack([psi(dots), psi(sq)], -1)

    def forward(self, p):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._gram(p.float())
        return self._gram(p)


class LorentzEdgeNet(nn.Module):
    def __init__(self, hidden=32, fp32_gram=False):
        super().__init__()
        self.minkowski = MinkowskiGram(fp32_gram)
        self.phi_e = nn.Sequential(nn.Linear(2, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.phi_h = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 2))

    def forward(self, p, mask):
        inv = self.minkowski(p)
        pair_mask = (mask[:, :, None] * mask[:, None, :])[..., None]
        m = (self.phi_e(inv) * pair_mask).sum(2) / mask.sum(1)[:, None, None]
        h = self.phi_h(m) * mask[..., None]
        return self.head(h.sum(1) / mask.sum(1, keepdim=True))


def _massless(e, eta, phi):
    pt = e / torch.cosh(eta)
    return torch.stack([e, pt * torch.cos(phi), pt * torch.sin(phi), pt * torch.sinh(eta)], -1)


def _jets(g, n, n_part, is_top):
    e_jet = 500 + 400 * torch.rand(n, 1, generator=g)
    eta0 = 0.5 * torch.randn(n, 1, generator=g); phi0 = 2 * math.pi * torch.rand(n, 1, generator=g)
    # prong structure: top jets have 3 hard prongs at wide angle, QCD jets one core + soft spray
    n_prong = 3 if is_top else 1
    spread = (350.0 / e_jet) if is_top else (60.0 / e_jet)
    prong = torch.randint(0, n_prong, (n, n_part), generator=g)
    prong_eta = spread * torch.randn(n, n_prong, generator=g)
    prong_phi = spread * torch.randn(n, n_prong, generator=g)
    w = torch.rand(n, n_part, generator=g) ** 3
    w = w / w.sum(1, keepdim=True)
    d_eta = prong_eta.gather(1, prong) + 0.02 * torch.randn(n, n_part, generator=g)
    d_phi = prong_phi.gather(1, prong) + 0.02 * torch.randn(n, n_part, generator=g)
    return _massless(e_jet * w, eta0 + d_eta, phi0 + d_phi)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_part, half = 12, 16
    batches = []
    for _ in range(30):
        p = torch.cat([_jets(g, half, n_part, True), _jets(g, half, n_part, False)])
        y = torch.cat([torch.ones(half), torch.zeros(half)]).long()
        n_valid = torch.randint(8, n_part + 1, (2 * half,), generator=g)
        mask = (torch.arange(n_part)[None] < n_valid[:, None]).float()
        perm = torch.randperm(2 * half, generator=g)
        batches.append(((p[perm] * mask[perm][..., None], mask[perm]), y[perm]))
    model = LorentzEdgeNet(fp32_gram=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=None)
