"""Permutation-equivariant Deep Sets layer (Zaheer et al. 2017) that predicts a per-element label
(is the element above the set's mean?) using element features plus a pooled set summary, with a mask
for padding. The loss is SUMMED over the real elements of each set and averaged over sets, and the set
sizes vary a lot from batch to batch (one batch holds sets of 6, the next of 40), so the raw loss
jumps up and down by several times between steps. That is bookkeeping, not instability: per-element
error falls steadily and the run trains fine."""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "healthy"
ORIGIN = None
SOURCE = "Deep Sets (Zaheer et al. 2017) equivariant layer; summed per-element loss with varying set size"
class EquivSet(nn.Module):
    def __init__(s, d, h):
        super().__init__(); s.phi = nn.Linear(d, h); s.gamma = nn.Linear(h, h); s.lam = nn.Linear(h, h); s.out = nn.Linear(h, 1)
    def forward(s, x, mask):
        e = F.relu(s.phi(x)) * mask[..., None]
        pooled = e.sum(1) / mask.sum(1, keepdim=True)
        z = F.relu(s.gamma(e) - s.lam(pooled)[:, None, :])
        return {"logits": s.out(z).squeeze(-1), "mask": mask}
def loss_fn(o, y):
    l = F.binary_cross_entropy_with_logits(o["logits"], y, reduction="none") * o["mask"]
    return l.sum(1).mean()
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    d, h = 3, 32 + 16 * seed; steps, bs, Nmax = 160, 16 + 8 * seed, 40
    model = EquivSet(d, h)
    w = torch.randn(d, generator=g)
    batches = []
    for _ in range(steps):
        n = int(torch.randint(6, Nmax + 1, (1,), generator=g))
        x = torch.randn(bs, Nmax, d, generator=g) + torch.randn(bs, 1, d, generator=g) * 2
        mask = torch.zeros(bs, Nmax); mask[:, :n] = 1
        s = x @ w; mean = (s * mask).sum(1, keepdim=True) / n
        y = (s > mean).float() * mask
        batches.append(((x, mask), y))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
