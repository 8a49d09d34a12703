"""Neural quantum state (feed-forward log-amplitude network) for the 1D transverse-field Ising
chain, trained by minimising the variational energy <psi|H|psi>/<psi|psi> computed exactly over
all 2^N spin configurations (the small-N check practitioners run before switching to Monte Carlo
sampling, as in NetKet's exact-state tutorials).

Mechanism (healthy): the loss IS the variational energy, so it is negative from step 0 and goes
more negative as the network learns (from about -h*N for a near-uniform state towards the exact
ground-state energy). Nothing is wrong: a monitor that expects a positive, decreasing-to-zero loss
would misread this. Amplitudes are normalised through a max-shift before exponentiation, so
there is no overflow. Seeds vary chain length, network depth/width, field strength and lr.

ORIGIN: None (healthy run, no failure origin).
Fix: none needed; fixed=True builds the identical run.
"""
import itertools
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Carleo & Troyer 2017 (Science) neural-network quantum states; NetKet exact-sum "
          "variational energy tutorials for the transverse-field Ising chain")


def _tfim_hamiltonian(n, h, j=1.0):
    configs = torch.tensor(list(itertools.product([1.0, -1.0], repeat=n)))
    dim = configs.shape[0]
    H = torch.zeros(dim, dim)
    zz = (configs * configs.roll(-1, dims=1)).sum(1)
    H[range(dim), range(dim)] = -j * zz
    idx = torch.arange(dim)
    for site in range(n):
        flipped = idx ^ (1 << (n - 1 - site))
        H[idx, flipped] += -h
    return configs, H


class LogAmplitudeNet(nn.Module):
    def __init__(self, n, width, depth):
        super().__init__()
        layers, d = [], n
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SiLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(d, 1)

    def forward(self, s):
        return self.head(self.body(s)).squeeze(-1)


def variational_energy(log_psi, H):
    psi = torch.exp(log_psi - log_psi.max())
    return (psi @ (H @ psi)) / (psi @ psi)


def build(seed, fixed=False):
    torch.manual_seed(seed)
    n = [8, 9, 10][seed % 3]
    width = [32, 48, 64][(seed + 1) % 3]
    depth = 1 + seed % 2
    h = [1.0, 0.8, 1.2][seed % 3]
    lr = [3e-3, 5e-3, 2e-3][seed % 3]
    steps = 150
    configs, H = _tfim_hamiltonian(n, h)
    model = LogAmplitudeNet(n, width, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [(configs, H) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=variational_energy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
