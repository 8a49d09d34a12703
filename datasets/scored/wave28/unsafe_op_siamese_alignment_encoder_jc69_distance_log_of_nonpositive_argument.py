"""Learned evolutionary-distance model for phylogenetics: a shared 1D-conv encoder embeds
each aligned DNA sequence of a pair; the absolute difference of the two embeddings goes
through an MLP and a sigmoid to a predicted proportion of differing sites p; the
Jukes-Cantor 1969 correction turns it into a distance d = -3/4 * log(1 - 4/3 p), regressed
with MSE onto the tree (patristic) distances of a simulated phylogeny; Adam.

Mechanism (unsafe_op): JC69 is only defined for p < 3/4 - at p = 3/4 the sites are
saturated and the argument 1 - 4p/3 reaches 0 - but the sigmoid lets p range over (0, 1).
The run is calm at first (p starts near 0.5, d ~ 0.82); as the model learns the deep
splits of the trees (patristic distances of 2-5 substitutions/site, i.e. nearly saturated
sites) it pushes p toward 3/4 for those pairs, and once a prediction overshoots, log() gets a zero or negative
argument: d becomes inf/NaN and the loss with it.

ORIGIN: `head`, the MLP + sigmoid that emits p; the unguarded log of the JC69 correction is
applied directly to its output.

Fix: clamp the JC69 argument, log((1 - 4p/3).clamp_min(1e-3)) - the guard used by
distance-matrix codes (e.g. "saturated distance" caps); nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "head"
SOURCE = ("Jukes & Cantor (1969) distance d = -3/4 log(1 - 4p/3), undefined for "
          "p >= 0.75 (saturated sequence pairs; distance-matrix programs return NaN/Inf "
          "or cap them); known pattern of learned evolutionary-distance regressors that "
          "put an unguarded closed-form correction on a sigmoid output")


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv1d(4, c, 5, padding=2)
        self.conv2 = nn.Conv1d(c, c, 5, padding=2)

    def forward(self, x):
        h = F.relu(self.conv1(x))
        h = F.relu(self.conv2(h))
        return torch.cat([h.mean(-1), h.amax(-1)], 1)


class JCDistance(nn.Module):
    def __init__(self, c, hid, clamp):
        super().__init__()
        self.enc = Encoder(c)
        self.head = nn.Sequential(nn.Linear(4 * c + 1, hid), nn.ReLU(), nn.Linear(hid, 1), nn.Sigmoid())
        self.clamp = clamp

    def forward(self, a, b):
        ea, eb = self.enc(a), self.enc(b)
        mism = 1.0 - (a * b).sum(1).mean(-1, keepdim=True)      # observed p-distance
        p = self.head(torch.cat([(ea - eb).abs(), ea * eb, mism], 1)).squeeze(-1)
        arg = 1.0 - 4.0 * p / 3.0
        if self.clamp:
            arg = arg.clamp_min(1e-3)
        return -0.75 * torch.log(arg)


def _evolve(g, seq, t):
    # JC69 substitution along a branch of length t
    L = seq.shape[0]
    p_change = 0.75 * (1 - torch.exp(torch.tensor(-4.0 * t / 3.0)))
    hit = torch.rand(L, generator=g) < p_change
    new = torch.randint(0, 4, (L,), generator=g)
    return torch.where(hit, new, seq)


def _pairs(g, n_pairs, L):
    # random ultrametric-ish trees of 8 taxa; sample pairs with their patristic distance
    xs_a, xs_b, ds = [], [], []
    while len(ds) < n_pairs:
        root = torch.randint(0, 4, (L,), generator=g)
        depth = 0.4 + 2.0 * float(torch.rand(1, generator=g))
        # two clades, each with two subclades, each with two leaves
        leaves, leaf_paths = [], []
        for c1 in range(2):
            t1 = depth * 0.5
            s1 = _evolve(g, root, t1)
            for c2 in range(2):
                t2 = depth * 0.3
                s2 = _evolve(g, s1, t2)
                for c3 in range(2):
                    t3 = depth * 0.2
                    leaves.append(_evolve(g, s2, t3))
                    leaf_paths.append((c1, c2, c3))
        for i in range(8):
            for j in range(i + 1, 8):
                a, b = leaf_paths[i], leaf_paths[j]
                if a[0] != b[0]:
                    d = 2 * depth
                elif a[1] != b[1]:
                    d = 2 * depth * 0.5
                else:
                    d = 2 * depth * 0.2
                xs_a.append(leaves[i]); xs_b.append(leaves[j]); ds.append(d)
    perm = torch.randperm(len(ds), generator=g)[:n_pairs]
    A = F.one_hot(torch.stack(xs_a)[perm], 4).float().transpose(1, 2).contiguous()
    B = F.one_hot(torch.stack(xs_b)[perm], 4).float().transpose(1, 2).contiguous()
    return A, B, torch.tensor(ds)[perm]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(14000 + seed)
    c = [16, 24, 32][seed % 3]
    hid = [32, 64, 48][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = [3e-3, 5e-3, 2e-3][seed % 3]
    L = 120
    steps = 150

    model = JCDistance(c, hid, clamp=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(d_pred, d_true):
        return F.mse_loss(d_pred, d_true)

    A, B, D = _pairs(g, bs * steps, L)
    batches = [((A[i * bs:(i + 1) * bs], B[i * bs:(i + 1) * bs]), D[i * bs:(i + 1) * bs])
               for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
