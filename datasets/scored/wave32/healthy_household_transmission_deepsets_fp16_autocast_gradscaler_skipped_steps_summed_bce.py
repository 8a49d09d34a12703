"""Household secondary-attack model: DeepSets over household members, trained in fp16 autocast with a working GradScaler (Adam, summed BCE-with-logits).

Healthy. Each sample is a household (2-8 members, zero-padded to 8 with a mask): per-member
features (standardised age, vaccination, days exposed to the index case, shared bedroom, mask
use) plus household size; the target per member is infection (secondary attack). A phi-network
embeds members, a masked sum pools them, and a rho-network scores each member against the pooled
context. Things a naive monitor would flag, all harmless here:
- fp16 autocast with ``GradScaler(init_scale=2**24)``: the first scaled backward passes overflow
  fp16, the scaler skips those optimizer steps (parameters exactly unchanged, the loss repeats
  for those batches) and halves its scale until the gradients fit; training then proceeds;
- the loss is a *sum* over all members of the batch (tens to a hundred), so its raw value is
  large compared with a mean-reduced BCE;
- padded members are masked out of the loss, so their exactly-zero gradients are expected.

ORIGIN: None (healthy).

Fix: nothing to fix; fixed=True builds the same run.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP docs: GradScaler skips steps with inf/NaN gradients and lowers the scale "
          "(expected during the first iterations); Zaheer et al. 2017 DeepSets; household "
          "transmission / secondary attack rate studies")


class HouseholdDeepSets(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x, mask):
        h = self.phi(x) * mask.unsqueeze(-1)
        ctx = h.sum(1, keepdim=True).expand_as(h)
        return self.rho(torch.cat([h, ctx], -1)).squeeze(-1), mask


def masked_summed_bce(out, y):
    logits, mask = out
    per = nn.functional.binary_cross_entropy_with_logits(logits.float(), y, reduction="none")
    return (per * mask).sum()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [64, 96, 48][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [16, 24, 12][seed % 3]
    steps = 150
    M = 8
    N = steps * bs
    size = torch.randint(2, M + 1, (N,), generator=g)
    mask = (torch.arange(M).unsqueeze(0) < size.unsqueeze(1)).float()
    feats = torch.randn(N, M, 5, generator=g)
    hsize = ((size.float() - 5) / 2).view(N, 1, 1).expand(N, M, 1)
    X = torch.cat([feats, hsize], -1) * mask.unsqueeze(-1)
    logit = (-1.0 + 1.2 * feats[..., 2] + 0.8 * feats[..., 3] - 0.9 * feats[..., 1] - 0.6 * feats[..., 4]
             + 0.4 * hsize[..., 0] + 0.5 * feats[..., 0] * feats[..., 2])
    Y = (torch.rand(N, M, generator=g) < torch.sigmoid(2.0 * logit)).float() * mask
    model = HouseholdDeepSets(6, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24)
    batches = [((X[i * bs:(i + 1) * bs], mask[i * bs:(i + 1) * bs]), Y[i * bs:(i + 1) * bs])
               for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=masked_summed_bce, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
