"""QM7-style molecular regressor (Rupp et al. 2012; Montavon et al. 2012):
every molecule (up to 23 atoms of H, C, N, O, S) is represented by its
Coulomb matrix (diagonal 0.5 Z^2.4, off-diagonal Z_i Z_j / |R_i - R_j|),
rows sorted by norm, zero-padded, upper triangle flattened (276 features),
and an MLP predicts the atomization energy in kcal/mol.  MSE, SGD with
momentum.

Mechanism: the features go in raw and the target is the raw energy.  Coulomb
entries span 0..~400 (sulphur's diagonal is 0.5*16^2.4 ~ 388, carbon's ~37,
close contacts even more) with wildly different column scales, and the
targets average -1600..-1900 kcal/mol with a spread of 600-800.  The first forward gives predictions of
O(10) against targets of O(1000): the MSE is ~1e6 from step 0, the gradient
w.r.t. the first layer is the huge residual times the huge inputs, the first
SGD step throws the weights out by orders of magnitude, and the loss
overflows to inf/NaN within a few steps.

ORIGIN is ``mlp.0``: the first Linear is the layer that receives the
unscaled Coulomb features (and carries the largest update).

Fix: standardise the features (per-column mean/std over the training set)
and the target (z-score); model, optimiser and lr unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "mlp.0"
SOURCE = ("QM7 Coulomb-matrix MLP (Montavon et al., NIPS 2012 / Rupp et al., PRL 2012); "
          "raw Coulomb features and kcal/mol targets fed without normalisation")

Z_CHOICES = torch.tensor([1.0, 6.0, 7.0, 8.0, 16.0])
Z_PROBS = torch.tensor([0.5, 0.32, 0.07, 0.08, 0.03])
E_ATOM = {1.0: -60.0, 6.0: -160.0, 7.0: -120.0, 8.0: -110.0, 16.0: -90.0}


def coulomb_features(z, pos, max_atoms):
    n = z.shape[0]
    d = torch.cdist(pos, pos) + torch.eye(n)
    cm = torch.outer(z, z) / d
    cm[range(n), range(n)] = 0.5 * z ** 2.4
    order = cm.norm(dim=1).argsort(descending=True)
    cm = cm[order][:, order]
    full = torch.zeros(max_atoms, max_atoms)
    full[:n, :n] = cm
    iu = torch.triu_indices(max_atoms, max_atoms)
    return full[iu[0], iu[1]]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(max_atoms=23, hidden=[400, 100], bs=64, lr=1e-3, steps=120),
        dict(max_atoms=18, hidden=[256], bs=32, lr=2e-3, steps=100),
        dict(max_atoms=20, hidden=[300, 300, 100], bs=96, lr=5e-4, steps=140),
    ][seed % 3]
    g = torch.Generator().manual_seed(7070 + seed)
    A = cfg["max_atoms"]
    feats, ys = [], []
    for _ in range(1500):
        n = int(torch.randint(6, A + 1, (1,), generator=g))
        z = Z_CHOICES[torch.multinomial(Z_PROBS, n, replacement=True, generator=g)]
        pos = torch.randn(n, 3, generator=g) * (n ** (1 / 3)) * 1.4       # Bohr
        d = torch.cdist(pos, pos) + torch.eye(n) * 1e3
        # teacher energy (kcal/mol): atomic terms + screened pair attractions
        e = sum(E_ATOM[float(v)] for v in z)
        e = e - (torch.outer(z, z).sqrt() * torch.exp(-d / 2.0)).triu(1).sum() * 25.0
        feats.append(coulomb_features(z, pos, A))
        ys.append(float(e))
    x = torch.stack(feats)
    y = torch.tensor(ys)
    if fixed:
        x = (x - x.mean(0)) / x.std(0).clamp_min(1e-6)
        y = (y - y.mean()) / y.std()

    torch.manual_seed(seed)
    layers, prev = [], x.shape[1]
    for h in cfg["hidden"]:
        layers += [nn.Linear(prev, h), nn.SiLU()]
        prev = h
    layers.append(nn.Linear(prev, 1))
    model = nn.Sequential()
    model.add_module("mlp", nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    mse = nn.MSELoss()

    def loss_fn(out, target):
        return mse(out.squeeze(1), target)

    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, x.shape[0], (cfg["bs"],), generator=g)
        batches.append((x[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
