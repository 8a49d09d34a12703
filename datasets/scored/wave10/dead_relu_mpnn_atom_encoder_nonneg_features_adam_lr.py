"""Message-passing network for a molecular property (a synthetic solubility-like scalar): the atom
encoder is Linear+ReLU over hand-made non-negative atom features (element one-hot, degree, attached
hydrogens, ring flag, and a Gaussian-RBF histogram of the atom's bond lengths), followed by three
rounds of mean message passing over the bonds and a mean readout into a ReLU MLP head. Adam runs
with lr 0.03, a value carried over from the linear fingerprint baseline this model replaced. Adam's
first updates move every weight by ~lr in its gradient-sign direction; because every encoder input
is >= 0, a few such steps push ~90% of the encoder units' pre-activations below zero for every atom
(and most readout units follow), the dead units get no gradient again and the prediction collapses
to a near-constant: the loss plateaus at the property variance and never becomes non-finite.
Fixed: Adam lr 1e-3."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "atom_encoder.0"
SOURCE = ("Dying ReLU from an lr tuned for a linear model reused for a deep net (Adam sign-like "
          "first steps); chemprop/MPNN-style encoder on non-negative atom features")

N_MAX, N_ELEM, N_RBF = 14, 5, 12


class MPNN(nn.Module):
    def __init__(self, d_in=N_ELEM + 3 + N_RBF, hidden=48, rounds=3):
        super().__init__()
        self.atom_encoder = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU())
        self.msg = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(rounds)])
        self.upd = nn.ModuleList([nn.Linear(2 * hidden, hidden) for _ in range(rounds)])
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, feats, adj, mask):
        h = self.atom_encoder(feats) * mask[..., None]
        a = adj / adj.sum(-1, keepdim=True).clamp(min=1)       # mean over bonded neighbours
        for msg, upd in zip(self.msg, self.upd):
            m = a @ msg(h)
            h = torch.relu(upd(torch.cat([h, m], -1))) * mask[..., None]
        pooled = h.sum(1) / mask.sum(1, keepdim=True)
        return self.readout(pooled).squeeze(-1)


def random_molecule_batch(g, B):
    n = torch.randint(6, N_MAX + 1, (B,), generator=g)
    mask = (torch.arange(N_MAX)[None] < n[:, None]).float()
    adj = torch.zeros(B, N_MAX, N_MAX)
    for b in range(B):           # random tree + a few ring closures
        nb = int(n[b])
        for i in range(1, nb):
            j = int(torch.randint(0, i, (1,), generator=g))
            adj[b, i, j] = adj[b, j, i] = 1
        for _ in range(int(torch.randint(0, 3, (1,), generator=g))):
            i, j = torch.randint(0, nb, (2,), generator=g).tolist()
            if abs(i - j) > 2:
                adj[b, i, j] = adj[b, j, i] = 1
    elem = torch.randint(0, N_ELEM, (B, N_MAX), generator=g)
    onehot = nn.functional.one_hot(elem, N_ELEM).float()
    deg = adj.sum(-1, keepdim=True)
    nh = (4 - deg).clamp(min=0) * (elem[..., None] == 0).float()
    ring = ((adj @ adj @ adj).diagonal(dim1=1, dim2=2) > 0).float()[..., None]
    bond_len = 1.0 + 0.1 * elem.float()[:, :, None] + 0.1 * elem.float()[:, None, :]
    bond_len = bond_len + 0.05 * torch.randn(B, N_MAX, N_MAX, generator=g)
    centres = torch.linspace(0.8, 2.0, N_RBF)
    rbf = (torch.exp(-((bond_len[..., None] - centres) ** 2) / 0.02) * adj[..., None]).sum(2)
    feats = torch.cat([onehot, deg, nh, ring, rbf], -1) * mask[..., None]
    # property: group contributions + a ring/branching term (stand-in for a measured label)
    contrib = torch.tensor([0.4, -0.6, 0.9, -0.2, 0.3])[elem]
    y = (contrib * mask).sum(1) - 0.3 * (deg.squeeze(-1) > 2).float().mul(mask).sum(1) \
        + 0.5 * (ring.squeeze(-1) * mask).sum(1) ** 0.5
    return (feats, adj, mask), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MPNN()
    data = [random_molecule_batch(g, 48) for _ in range(10)]
    ally = torch.cat([d[1] for d in data])
    mu, sd = ally.mean(), ally.std()
    data = [(x, (y - mu) / sd) for x, y in data]
    steps = 120
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 0.03)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
