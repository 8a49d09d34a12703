"""Siamese network for mass-spectrum matching (same compound or not) trained with the
contrastive loss of Hadsell, Chopra & LeCun (2006): a shared MLP embeds both spectra, positives
are pulled together (d^2) and negatives pushed beyond a margin (max(0, m - d)^2).  The 64 m/z bins
are fed as raw ion counts straight from the instrument export, i.e. values of 1e1..1e5 with a
total ion current varying over orders of magnitude between runs, instead of being standardised.
The first-layer pre-activations are ~1e3-1e4, embedding distances ~1e3 and the loss ~1e6 at
step 0; the momentum-SGD step taken on that loss overshoots immediately and the run goes
to inf/NaN within a few steps.  The fix standardises every bin with the training-set mean and std
(computed once); the network, loss, lr and optimiser are unchanged."""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "embed.0"
SOURCE = ("Hadsell, Chopra, LeCun 'Dimensionality Reduction by Learning an Invariant Mapping' (CVPR 2006); "
          "Siamese spectral-similarity models (e.g. MS2DeepScore) that require scaled intensities")

BINS, EMB, MARGIN = 64, 16, 1.0


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(BINS, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, EMB))

    def forward(self, a, b):
        return self.embed(a), self.embed(b)


def contrastive_loss(out, same):
    ea, eb = out
    d2 = ((ea - eb) ** 2).sum(1)
    d = (d2 + 1e-9).sqrt()
    return (same * d2 + (1 - same) * torch.clamp(MARGIN - d, min=0) ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_comp = 30
    profiles = torch.rand(n_comp, BINS, generator=g) ** 4          # peaky relative abundance

    def spectra(cid):
        tic = torch.exp(11.0 + 1.0 * torch.randn(len(cid), 1, generator=g))   # total ion current
        rel = profiles[cid] * torch.exp(0.2 * torch.randn(len(cid), BINS, generator=g))
        return rel / rel.sum(1, keepdim=True) * tic + 50.0 * torch.rand(len(cid), BINS, generator=g)

    def sample(n):
        ca = torch.randint(0, n_comp, (n,), generator=g)
        same = (torch.rand(n, generator=g) < 0.5)
        cb = torch.where(same, ca, torch.randint(0, n_comp, (n,), generator=g))
        return (spectra(ca), spectra(cb)), (ca == cb).float()

    steps = 200
    raw = [sample(64) for _ in range(steps)]
    if fixed:
        allx = torch.cat([torch.cat([a, b]) for (a, b), _ in raw])
        mu, sd = allx.mean(0), allx.std(0)
        raw = [(((a - mu) / sd, (b - mu) / sd), y) for (a, b), y in raw]
    model = Siamese()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=contrastive_loss, batches=raw, steps=steps,
                amp_dtype=None, scaler=None)
