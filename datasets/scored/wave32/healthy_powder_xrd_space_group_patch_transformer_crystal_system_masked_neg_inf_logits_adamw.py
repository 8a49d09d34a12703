"""Space-group classifier for powder X-ray diffraction patterns: a small patch transformer reads a
1D diffractogram (intensity vs 2-theta) and scores 16 space groups. The crystal system is already
known from indexing, so the logits of space groups outside that crystal system are set to -inf
with masked_fill before cross-entropy (a common pattern for hierarchical / constrained labels).

Mechanism (healthy): most logits of every row are exactly -inf, and log_softmax of those entries
is -inf too, but the true space group always lies inside the allowed set, so the cross-entropy
only ever picks finite entries; the softmax gradient of masked entries is exactly zero (sparse
gradients on the head rows of masked classes). At least one class is always allowed, so there is
never an all--inf row. The model learns normally; a monitor that flags any -inf in the output
would raise a false alarm.

ORIGIN: None (healthy run).
Fix: none needed; fixed=True builds the identical run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Oviedo et al. 2019 / Park et al. 2017 CNN space-group classification from powder XRD; "
          "masked_fill(-inf) logit masking for constrained label sets (PyTorch forum pattern)")

N_SG, N_SYS, N_BINS = 16, 4, 256


class PatchXRDTransformer(nn.Module):
    def __init__(self, d, layers, patch=16):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(patch, d)
        self.pos = nn.Parameter(torch.randn(N_BINS // patch, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, N_SG)

    def forward(self, pattern, allowed):
        b = pattern.shape[0]
        tok = self.embed(pattern.view(b, -1, self.patch)) + self.pos
        h = self.norm(self.encoder(tok).mean(1))
        return self.head(h).masked_fill(~allowed, float("-inf"))


def _make_data(g, bs, peaks, system_of):
    tt = torch.linspace(0, 1, N_BINS)
    y = torch.randint(0, N_SG, (bs,), generator=g)
    strain = 1.0 + 0.02 * torch.randn(bs, 1, generator=g)
    pos = peaks[y] * strain                             # (bs, 8) peak positions
    amp = 0.5 + torch.rand(bs, pos.shape[1], generator=g)
    width = 0.006
    pat = (amp[:, :, None] * torch.exp(-((tt[None, None, :] - pos[:, :, None]) / width) ** 2)).sum(1)
    pat = pat + 0.03 * torch.randn(bs, N_BINS, generator=g)
    allowed = system_of[None, :] == system_of[y][:, None]
    return (pat, allowed), y


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7 + seed)
    d = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [32, 24, 48][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    steps = 150
    peaks = 0.1 + 0.8 * torch.rand(N_SG, 8, generator=g)
    system_of = torch.arange(N_SG) % N_SYS
    model = PatchXRDTransformer(d, layers)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    batches = [_make_data(g, bs, peaks, system_of) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
