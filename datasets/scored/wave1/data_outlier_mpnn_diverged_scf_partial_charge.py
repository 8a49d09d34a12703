"""Message-passing neural network (dense batched graphs: node features, adjacency, node mask) that
regresses a molecular property from atom-type one-hots plus a computed partial charge per atom,
trained with SGD + momentum on a stream of fresh minibatches. In minibatch 60 one molecule carries
partial charges of ~3e4 e from a charge calculation whose SCF diverged (the pre-processing script
did not check convergence). The first layer that reads the charge (atom_embed) turns it into
activations ~1e4x larger than normal, the loss of that batch jumps from ~0.03 to ~1e4 and its
gradient, amplified by momentum, throws every weight far out: the next step overflows to inf and the loss is NaN from then
on, after 60 calm steps. The fixed run drops the molecule whose charges are physically impossible
(|q| > 4 e) before batching."""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "atom_embed"
SOURCE = ("Unconverged/failed quantum-chemistry labels and descriptors in molecular datasets "
          "(e.g. QM9 'uncharacterized' molecules, failed Gasteiger/ESP charges that come out as "
          "huge numbers)")


class MPNN(nn.Module):
    def __init__(self, f_in, hidden, n_layers=3):
        super().__init__()
        self.atom_embed = nn.Linear(f_in, hidden)
        self.msg = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(n_layers))
        self.upd = nn.ModuleList(nn.Linear(2 * hidden, hidden) for _ in range(n_layers))
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, x, adj, mask):
        h = torch.relu(self.atom_embed(x)) * mask[..., None]
        deg = adj.sum(-1, keepdim=True).clamp_min(1.0)
        for msg, upd in zip(self.msg, self.upd):
            m = adj @ torch.relu(msg(h)) / deg
            h = (h + torch.relu(upd(torch.cat([h, m], -1)))) * mask[..., None]
        return self.readout(h.sum(1) / mask.sum(1, keepdim=True)).squeeze(-1)


def _molecules(g, n_mol, n_max, n_types):
    n_atoms = torch.randint(6, n_max + 1, (n_mol,), generator=g)
    mask = (torch.arange(n_max)[None, :] < n_atoms[:, None]).float()
    types = torch.randint(0, n_types, (n_mol, n_max), generator=g)
    onehot = torch.nn.functional.one_hot(types, n_types).float()
    charge = (0.3 * torch.randn(n_mol, n_max, generator=g) + 0.1 * (types.float() - 1.5)) * mask
    # chain backbone + a few random ring closures
    adj = torch.zeros(n_mol, n_max, n_max)
    idx = torch.arange(n_max - 1)
    adj[:, idx, idx + 1] = 1.0
    extra = (torch.rand(n_mol, n_max, n_max, generator=g) < 0.06).float()
    adj = ((adj + extra) > 0).float()
    adj = torch.triu(adj, 1); adj = adj + adj.transpose(1, 2)
    adj = adj * mask[:, :, None] * mask[:, None, :]
    x = torch.cat([onehot, charge[..., None]], -1) * mask[..., None]
    type_w = torch.tensor([0.5, -0.3, 1.0, 0.2])
    atom_term = (onehot @ type_w) + 1.5 * charge ** 2 + 0.5 * charge * (adj @ charge[..., None]).squeeze(-1)
    y = (atom_term * mask).sum(1) / mask.sum(1)
    return x, adj, mask, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, n_types, n_max = 150, 4, 12
    batches = []
    for b in range(steps):
        x, adj, mask, y = _molecules(g, 32, n_max, n_types)
        if b == 60:
            bad = 7
            x[bad, :, n_types] = (3.0e4 * torch.randn(n_max, generator=g)) * mask[bad]
            if fixed:
                keep = x[:, :, n_types].abs().amax(1) <= 4.0
                x, adj, mask, y = x[keep], adj[keep], mask[keep], y[keep]
        batches.append(((x, adj, mask), y))
    model = MPNN(n_types + 1, 48)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lambda p, y: ((p - y) ** 2).mean(),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
