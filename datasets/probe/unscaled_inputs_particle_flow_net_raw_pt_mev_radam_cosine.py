"""Particle-Flow-Network / Deep Sets jet tagger (per-particle MLP Phi, sum over the jet's
particles, MLP F -> quark/gluon logit) fed raw particle transverse momenta straight from an
ATLAS-style ntuple, in MeV (1e3-1e5), next to eta/phi. Logits are O(1e3-1e4) and weight
gradients O(1e4) at step 0. The optimizer is RAdam (picked "so no warmup is
needed") with a cosine decay inside its step: for its first ~5 steps RAdam's variance
rectification is undefined and it applies the raw bias-corrected momentum, lr * m_t, so
those huge gradients land as enormous weight updates; the loss jumps by orders of
magnitude and the lr-sized adaptive steps afterwards never bring it back. fixed=True: pT enters as the
jet-momentum fraction z_i = pT_i / sum_j pT_j (standard EFN/PFN preprocessing)."""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = None
SOURCE = ("Komiske, Metodiev & Thaler 2019 'Energy Flow Networks' (inputs are pT fractions z_i); "
          "ATLAS ntuples store momenta in MeV; RAdam (Liu et al. 2020) falls back to un-normalised "
          "SGD-with-momentum steps while rho_t <= 5 (torch.optim.RAdam); 'loss explodes in the "
          "first iterations with raw pT' reports for PFN/Deep Sets taggers.")


class CosineRAdam(torch.optim.RAdam):
    def __init__(self, params, lr, total, **kw):
        super().__init__(params, lr=lr, **kw)
        self.lr0, self.total, self.t = lr, total, 0

    @torch.no_grad()
    def step(self, closure=None):
        f = 0.5 * (1 + math.cos(math.pi * min(1.0, self.t / self.total)))
        for g in self.param_groups:
            g["lr"] = self.lr0 * (0.1 + 0.9 * f)
        self.t += 1
        return super().step(closure)


class ParticleFlowNet(nn.Module):
    def __init__(self, d_in=3, latent=64):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(), nn.Linear(64, latent), nn.ReLU())
        self.F = nn.Sequential(nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, parts, mask):
        h = self.phi(parts) * mask.unsqueeze(-1)           # (B, N, latent), padded particles zeroed
        return self.F(h.sum(dim=1)).squeeze(-1)


def _jets(g, bs, n_max=40):
    y = torch.randint(0, 2, (bs,), generator=g).float()      # 1 = gluon
    jet_pt = 1000.0 * (300 + 200 * torch.rand(bs, generator=g))   # MeV
    mult = torch.where(y > 0, 30 + 8 * torch.rand(bs, generator=g),
                       12 + 8 * torch.rand(bs, generator=g)).round().long()
    alpha = torch.where(y > 0, 1.2, 0.6)                     # gluons: softer fragmentation
    u = torch.rand(bs, n_max, generator=g).clamp_min(1e-4)
    mask = (torch.arange(n_max)[None] < mult[:, None]).float()
    w = u ** (1.0 / alpha[:, None]) * mask
    z = w / w.sum(1, keepdim=True)
    width = torch.where(y > 0, 0.3, 0.1)[:, None]          # gluon jets are wider
    eta = width * torch.randn(bs, n_max, generator=g) * mask
    phi = width * torch.randn(bs, n_max, generator=g) * mask
    return z * jet_pt[:, None], z, eta, phi, mask, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ParticleFlowNet()
    steps = 300
    batches = []
    for _ in range(steps):
        pt, z, eta, phi, mask, y = _jets(g, 64)
        first = z if fixed else pt
        batches.append(((torch.stack([first, eta, phi], dim=-1), mask), y))
    opt = CosineRAdam(model.parameters(), lr=1e-3, total=steps)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
