"""Protein residue-contact head on frozen protein-language-model embeddings: per-residue
embeddings (precomputed, ESM-like, 96-d) -> 2-layer MLP projection -> H (L x d) ->
inner-product decoder P = sigmoid(H H^T) (the graph-auto-encoder decoder) -> BCELoss
against the contact map (C-beta < 8 A, |i - j| >= 3), Adam.

Mechanism (saturation): PLM embeddings are strongly anisotropic - every residue vector
shares a large common component - and the ReLU projection keeps H non-negative, so every
entry of H H^T is a large positive number (tens to hundreds), not O(1). sigmoid() of it is
exactly 1.0 in float32 for almost every residue pair. BCELoss clamps log(1 - p) at -100, and
the sigmoid backward p * (1 - p) is exactly 0, so the saturated pairs (i.e. nearly all
non-contacts) contribute a loss of ~100 each and no gradient at all; the few unsaturated
pairs cannot pull the embeddings back. The loss sits at ~100 x the non-contact fraction.

ORIGIN: `decoder`, the inner-product decoder whose sigmoid saturates (the module holding
the unscaled H H^T -> sigmoid).

Fix: scale the pair logits by 1/d (a temperature on the inner product) so they start O(1)
- a smaller pre-activation; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "decoder"
SOURCE = ("Inner-product decoder sigmoid(Z Z^T) of graph auto-encoders (Kipf & Welling "
          "2016) reused as a contact head; anisotropy of language-model embeddings "
          "(Ethayarajh 2019; common-direction outliers in ESM embeddings); BCELoss log "
          "clamp at -100 (PyTorch docs)")

D_PLM = 96


class InnerProductDecoder(nn.Module):
    def __init__(self, d, scaled):
        super().__init__()
        self.scale = 1.0 / d if scaled else 1.0

    def forward(self, h):
        return torch.sigmoid(self.scale * h @ h.transpose(1, 2))


class ContactHead(nn.Module):
    def __init__(self, hid, d, scaled):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(D_PLM, hid), nn.ReLU(), nn.Linear(hid, d))
        self.decoder = InnerProductDecoder(d, scaled)

    def forward(self, emb):
        return self.decoder(self.proj(emb))


def _proteins(g, n, L):
    # 3-D chain (random walk with 3.8 A steps, compacted), contacts from C-beta distance
    steps = torch.randn(n, L, 3, generator=g)
    steps = 3.8 * steps / steps.norm(dim=-1, keepdim=True)
    xyz = steps.cumsum(1)
    xyz = xyz - xyz.mean(1, keepdim=True)
    xyz = xyz * (0.8 + 0.1 * torch.rand(n, 1, 1, generator=g))       # partly collapsed chain
    dist = torch.cdist(xyz, xyz)
    sep = (torch.arange(L)[:, None] - torch.arange(L)[None]).abs()
    contact = ((dist < 8.0) & (sep >= 3)).float()
    # "PLM embeddings": common direction + position code + local-environment code + noise
    gen0 = torch.Generator().manual_seed(31)
    common = torch.randn(D_PLM, generator=gen0)
    common = 40.0 * common / common.norm()
    P = torch.randn(3, D_PLM, generator=gen0) * 0.6
    pos = torch.arange(L).float()[:, None] / L
    freqs = torch.arange(1, D_PLM // 2 + 1).float()[None] * 3.14159
    pe = torch.cat([torch.sin(pos * freqs), torch.cos(pos * freqs)], 1) * 0.5
    env = (xyz / 6.0) @ P
    emb = common + pe[None] + env + 0.3 * torch.randn(n, L, D_PLM, generator=g)
    return emb, contact, sep


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12000 + seed)
    hid = [64, 128, 96][seed % 3]
    d = [32, 64, 48][seed % 3]
    L = [40, 32, 48][seed % 3]
    bs = [8, 12, 6][seed % 3]
    lr = [1e-3, 5e-4, 2e-3][seed % 3]
    steps = 120

    model = ContactHead(hid, d, scaled=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    emb, contact, sep = _proteins(g, bs * steps, L)
    valid = (sep >= 3).float()

    def loss_fn(p, y):
        return F.binary_cross_entropy(p * valid, y * valid, reduction="sum") / (valid.sum() * p.shape[0])

    batches = [(emb[i * bs:(i + 1) * bs], contact[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
