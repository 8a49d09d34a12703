"""Aqueous-solubility (logS, ESOL-style) regression from twelve RDKit 2-D descriptors fed to a
12 -> 64 -> 64 -> 1 SiLU MLP with MSE and SGD + momentum.  The descriptor table was passed to the
network exactly as rdkit.Chem.Descriptors returned it: MolWt in the hundreds, TPSA and LabuteASA
in the tens to hundreds, BertzCT in the hundreds to thousands, and Ipc (the information content
of the coefficients of the characteristic polynomial), which grows combinatorially with molecule
size and spans ~1e3 to ~1e9, next to FractionCSP3 in [0, 1] and small counts.  The first layer's
pre-activations are therefore up to ~1e8, the prediction at step 0 is off by the same amount and
the MSE is 1e13-1e15 from the very first step; the gradient on the first-layer weights scales with
the raw feature values (Ipc x error), so the first SGD step throws the weights to astronomically
large values and the loss of the second step is already inf/NaN.  Fixed: every descriptor column
standardised with the training mean and std (StandardScaler), nothing else changed."""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("Delaney 2004 ESOL; RDKit Descriptors (Ipc is notorious for its range, rdkit docs/issues "
          "suggest avgIpc or log); the common 'MSE is 1e15 then nan' report for descriptor MLPs without "
          "StandardScaler")

NAMES = ["MolWt", "MolLogP", "TPSA", "NumHDonors", "NumHAcceptors", "NumRotatableBonds",
         "RingCount", "BertzCT", "Ipc", "LabuteASA", "HeavyAtomCount", "FractionCSP3"]


class DescriptorMLP(nn.Module):
    def __init__(self, n_in, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    bs, steps = 64, 200

    def sample(n):
        heavy = torch.randint(8, 46, (n,), generator=g).float()
        rings = torch.clamp(torch.round(heavy / 9 + torch.randn(n, generator=g) * 0.8), 0, 6)
        mw = heavy * 13.5 + torch.randn(n, generator=g) * 15
        logp = -1.0 + heavy * 0.09 + torch.randn(n, generator=g) * 1.3
        hbd = torch.randint(0, 5, (n,), generator=g).float()
        hba = torch.clamp(torch.round(heavy / 6 + torch.randn(n, generator=g)), 0, 12)
        tpsa = 12 * hba + 8 * hbd + torch.randn(n, generator=g) * 10
        rot = torch.clamp(torch.round(heavy / 5 - rings + torch.randn(n, generator=g) * 1.5), 0, 15)
        bertz = heavy * 28 + rings * 90 + torch.randn(n, generator=g) * 60
        ipc = torch.pow(10.0, 1.5 + heavy * 0.17 + torch.randn(n, generator=g) * 0.3)
        asa = heavy * 5.6 + torch.randn(n, generator=g) * 6
        fsp3 = torch.rand(n, generator=g)
        arom = torch.clamp(rings * 6 / heavy, 0, 1)
        logs = 0.16 - 0.63 * logp - 0.0062 * mw + 0.066 * rot - 0.74 * arom \
            + 0.3 * torch.tanh(tpsa / 60 - 1) + 0.25 * torch.randn(n, generator=g)
        X = torch.stack([mw, logp, tpsa, hbd, hba, rot, rings, bertz, ipc, asa, heavy, fsp3], dim=1)
        return X, logs

    X_ref, _ = sample(4096)
    if fixed:
        mu, sd = X_ref.mean(0), X_ref.std(0)                  # StandardScaler fitted on training data
        transform = lambda X: (X - mu) / sd
    else:
        transform = lambda X: X

    batches = []
    for s in range(steps):
        X, y = sample(bs)
        batches.append((transform(X), y))

    model = DescriptorMLP(len(NAMES))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    mse = nn.MSELoss()

    def loss_fn(out, target):
        return mse(out, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
