"""QSAR regression of a standardised potency (pIC50) from 512-bit ECFP4-style fingerprints
(binary, sparse: ~5% of bits on), a 512 -> 48 -> 48 -> 1 GELU MLP with MSE loss, as in the
'fingerprint + feed-forward net' baselines of MoleculeNet.  Optimiser: RMSprop with lr 0.05, the
value from a notebook where the same net was trained with Adagrad (whose accumulated denominator
makes a large lr harmless).  RMSprop's denominator is a short running RMS (alpha 0.99, bias-free
start), so its first step moves every weight by up to 10x lr (0.5, more than the
weights' own size, including the rows of rarely-on bits); the hidden activations and the output
explode within the first few steps (loss 1e5-1e7), and afterwards the net keeps overshooting and
never gets back below its starting level: the loss hovers at 1-100x the variance of the target
for the rest of the run, finite throughout, no NaN.  Fixed: RMSprop lr 3e-4, nothing else
changed."""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Wu et al. 2018 MoleculeNet ECFP + MLP baselines; Rogers & Hahn 2010 extended-connectivity "
          "fingerprints; the generic 'loss not decreasing, predictions collapse to the mean' symptom "
          "of an adaptive optimiser run at an lr tuned for another optimiser")


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_bits, bs, steps = 512, 64, 250
    bit_freq = torch.rand(n_bits, generator=g) * 0.1                      # 0-10% on-rate per bit
    contrib = torch.randn(n_bits, generator=g) * (torch.rand(n_bits, generator=g) < 0.25).float()
    pair_a = torch.randint(0, n_bits, (40,), generator=g)
    pair_b = torch.randint(0, n_bits, (40,), generator=g)

    def sample(n):
        fp = (torch.rand(n, n_bits, generator=g) < bit_freq).float()
        y = fp @ contrib + 2.0 * (fp[:, pair_a] * fp[:, pair_b]).sum(-1) + 0.3 * torch.randn(n, generator=g)
        return fp, y

    _, y_ref = sample(4096)
    mu, sd = y_ref.mean(), y_ref.std()
    batches = []
    for s in range(steps):
        fp, y = sample(bs)
        batches.append((fp, (y - mu) / sd))

    model = nn.Sequential(nn.Linear(n_bits, 48), nn.GELU(), nn.Linear(48, 48), nn.GELU(), nn.Linear(48, 1),
                          nn.Flatten(0))
    opt = torch.optim.RMSprop(model.parameters(), lr=3e-4 if fixed else 0.05)
    mse = nn.MSELoss()

    def loss_fn(out, target):
        return mse(out, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
