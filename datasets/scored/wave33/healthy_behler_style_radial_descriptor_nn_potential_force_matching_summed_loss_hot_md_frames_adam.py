"""Machine-learned interatomic potential for small Cu clusters, Behler-Parrinello style:
Gaussian radial symmetry functions G2 (several eta / r_s, smooth cosine cutoff) per atom ->
shared atomic MLP -> atomic energies summed to the total energy; forces are obtained in the
forward pass as F = -dE/dr with autograd (create_graph=True) so that force errors train the
weights. The training frames come from an MD trajectory (reference: a Morse potential for Cu).
Loss: SUM over atoms and Cartesian components of the squared force error plus the squared
total-energy error, summed over the frames of the batch (the "force-matching" loss as written
in many MLIP codes, not normalised). Adam.

Why it looks suspicious but is healthy: (1) the loss is a raw sum (tens to ~100 at the start,
eV^2/A^2 summed over all force components of all frames); (2) it spikes by 10-100x whenever a
batch of frames from the high-temperature part of the trajectory (strongly compressed bonds,
large forces) comes in, and falls back on the next ordinary batch; (3) the per-step gradients
are second-order (force loss through autograd). None of this is a failure: the loss on
ordinary batches decreases steadily and the potential learns.

ORIGIN: None (healthy).

Fix: none needed.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Common practice: force-matching losses summed over atoms and components in MLIP "
          "training (Behler & Parrinello 2007 descriptors; ANI / SchNetPack / DeePMD-style energy + "
          "force losses), and loss spikes from high-temperature MD frames in the training set.")


class G2Descriptor(nn.Module):
    def __init__(self, n_g, rc):
        super().__init__()
        self.rc = rc
        self.register_buffer("rs", torch.linspace(1.8, rc - 0.5, n_g))
        self.register_buffer("eta", torch.full((n_g,), 4.0))

    def forward(self, pos):
        N = pos.shape[1]
        diff = pos.unsqueeze(1) - pos.unsqueeze(2)
        r = ((diff ** 2).sum(-1) + torch.eye(N) * 1e3).sqrt()
        fc = 0.5 * (torch.cos(torch.pi * r / self.rc) + 1) * (r < self.rc)
        g = torch.exp(-self.eta * (r.unsqueeze(-1) - self.rs) ** 2) * fc.unsqueeze(-1)
        return g.sum(2)                                          # B,N,n_g


class BPPotential(nn.Module):
    def __init__(self, n_g, width, depth):
        super().__init__()
        self.desc = G2Descriptor(n_g, 5.0)
        layers, c = [], n_g
        for _ in range(depth):
            layers += [nn.Linear(c, width), nn.Tanh()]
            c = width
        layers.append(nn.Linear(c, 1))
        self.atomic = nn.Sequential(*layers)

    def forward(self, pos):
        with torch.enable_grad():
            pos = pos.clone().requires_grad_(True)
            e = self.atomic(self.desc(pos)).squeeze(-1).sum(1)
            f = -torch.autograd.grad(e.sum(), pos, create_graph=True)[0]
        return e, f


def _morse(pos, D=0.34, a=1.36, r0=2.63):
    N = pos.shape[1]
    pos = pos.clone().requires_grad_(True)
    r = ((pos.unsqueeze(1) - pos.unsqueeze(2)) ** 2).sum(-1) + torch.eye(N) * 1e3
    r = r.sqrt()
    v = D * ((1 - torch.exp(-a * (r - r0))) ** 2 - 1) * (1 - torch.eye(N))
    e = 0.5 * v.sum((1, 2))
    f = -torch.autograd.grad(e.sum(), pos)[0]
    return e.detach(), f.detach()


def _frames(g, n, N, amp):
    base = []
    for i in range(2):
        for j in range(2):
            for k in range(3):
                base.append([i * 2.6, j * 2.6, k * 2.6])
    base = torch.tensor(base[:N])
    pos = base.unsqueeze(0) + amp.view(-1, 1, 1) * torch.randn(n, N, 3, generator=g)
    e, f = _morse(pos)
    return pos, e, f


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    N = [8, 10, 12][seed % 3]
    width = [32, 48, 24][seed % 3]
    depth = [2, 2, 3][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [8, 6, 10][seed % 3]
    hot_every = [20, 25, 17][seed % 3]
    steps = 250
    torch.manual_seed(seed)
    model = BPPotential(8, width, depth)
    batches = []
    e_shift = None
    for s in range(steps):
        hot = s % hot_every == hot_every - 1
        amp = torch.full((bs,), 0.2 if hot else 0.10)
        pos, e, f = _frames(g, bs, N, amp)
        if e_shift is None:
            e_shift = float(e.mean())
        batches.append((pos, (e - e_shift, f)))
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, target):
        e_pred, f_pred = out
        e_ref, f_ref = target
        return ((f_pred - f_ref) ** 2).sum() + ((e_pred - e_ref) ** 2).sum()

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
