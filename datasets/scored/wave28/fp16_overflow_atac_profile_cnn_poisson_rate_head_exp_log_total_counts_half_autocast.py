"""Binned ATAC/ChIP-nexus profile model (BPNet-like dilated Conv1d tower) with a rate
head: per-bin rate = softmax(profile logits) * exp(log_total), where log_total comes from
a pooled count head; loss = squared error of log1p(rate) vs log1p(binned read counts).
Trained with torch.autocast(float16) and Adam, no GradScaler (the author's note: "loss
values are O(1), so no scaler needed").

Mechanism (fp16_overflow): the count head learns log(total reads in the window). Deeply
sequenced windows hold 1e4-1e6 reads, i.e. log_total up to ~13, but exp() under autocast runs
in the dtype of its input, which is the float16 output of the head's Linear: exp(x) overflows
float16 (max 65504) as soon as the prediction passes ~11.09. The run is calm while the count
head is still learning; once it has learned the scale of the high-coverage windows the rate
becomes inf, the loss inf/NaN. In float32 the same model and data train normally.

ORIGIN: `rate_head`, the module that turns the count head's float16 log-total into a rate
with exp() - the first value to pass 65504.

Fix: compute the rate head in float32 (cast the log-total and the profile logits to float
before exp/softmax); autocast stays on for the conv tower.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "rate_head"
SOURCE = ("BPNet (Avsec et al., Nat. Genet. 2021) profile + total-count heads; float16 "
          "exp() overflow above ~11.09 under autocast (PyTorch AMP docs: ops not in the "
          "autocast lists run in the input dtype); 'NaN loss with AMP in Poisson/NB count "
          "models' reports")


class RateHead(nn.Module):
    def __init__(self, c, n_bins, fp32):
        super().__init__()
        self.profile = nn.Conv1d(c, 1, 1)
        self.count = nn.Linear(2 * c, 1)
        self.pool = nn.AdaptiveAvgPool1d(n_bins)
        self.fp32 = fp32

    def forward(self, h):
        logits = self.pool(self.profile(h)).squeeze(1)       # (B, n_bins)
        log_total = self.count(torch.cat([h.mean(-1), h.amax(-1)], 1))   # (B, 1)
        if self.fp32:
            logits, log_total = logits.float(), log_total.float()
        return torch.softmax(logits, -1) * torch.exp(log_total)


class ProfileNet(nn.Module):
    def __init__(self, c, n_layers, n_bins, fp32):
        super().__init__()
        self.stem = nn.Conv1d(4, c, 15, padding=7)
        self.tower = nn.ModuleList([nn.Conv1d(c, c, 3, padding=2 ** i, dilation=2 ** i)
                                    for i in range(1, n_layers + 1)])
        self.rate_head = RateHead(c, n_bins, fp32)

    def forward(self, x):
        h = F.relu(self.stem(x))
        for conv in self.tower:
            h = h + F.relu(conv(h))
        return self.rate_head(h)


MOTIF = torch.tensor([2, 3, 0, 1, 2, 3, 1, 0])   # GTACGTCA-like


def _windows(g, n, L, n_bins):
    idx = torch.randint(0, 4, (n, L), generator=g)
    n_sites = torch.randint(0, 4, (n,), generator=g)
    prof = torch.full((n, n_bins), 0.2)
    bin_w = L // n_bins
    for i in range(n):
        for _ in range(int(n_sites[i])):
            p = int(torch.randint(0, L - 8, (1,), generator=g))
            idx[i, p:p + 8] = MOTIF
            b = min(n_bins - 1, (p + 4) // bin_w)
            lo, hi = max(0, b - 2), min(n_bins, b + 3)
            prof[i, lo:hi] += torch.tensor([1.0, 3.0, 6.0, 3.0, 1.0])[: hi - lo]
    # heavy-tailed sequencing depth: log total reads ~ 7.5 + 1.5 * sites + noise (up to ~13)
    log_tot = 7.5 + 1.5 * n_sites.float() + 0.5 * torch.randn(n, generator=g)
    rate = prof / prof.sum(1, keepdim=True) * torch.exp(log_tot)[:, None]
    y = torch.poisson(rate, generator=g)
    x = F.one_hot(idx, 4).float().transpose(1, 2).contiguous()
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(13000 + seed)
    c = [32, 24, 48][seed % 3]
    n_layers = [3, 4, 2][seed % 3]
    bs = [16, 24, 12][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    L, n_bins = 160, 20
    steps = 170

    model = ProfileNet(c, n_layers, n_bins, fp32=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(rate, y):
        # per-bin squared error on log1p(counts) (ChromBPNet-style log-count loss)
        return F.mse_loss(torch.log1p(rate.float()), torch.log1p(y))

    x, y = _windows(g, bs * steps, L, n_bins)
    with torch.no_grad():   # "init well": count head starts at the mean log depth
        model.rate_head.count.bias.fill_(float(torch.log(y[:256].sum(1) + 1.0).mean()))
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
