"""Metapopulation incidence model: message-passing GNN whose coupling kernel is a learned spatial distance kernel (AdamW, L1 loss).

Mechanism: each county has a learnable 2-D "effective location" (nn.Embedding); coupling between
counties is K_ij = exp(-d_ij / ell) with d_ij = sqrt(sum((z_i - z_j)^2)), written by hand over all
pairs i, j, and the GNN mixes county states with K (a gravity-style metapopulation layer),
followed by an MLP that predicts next week's standardised log incidence. The forward pass is
perfectly calm: d_ii = 0, K_ii = 1, the loss is finite. But the backward of sqrt at 0 is
1/(2*sqrt(0)) = inf, multiplied by the zero gradient of the squared difference gives
inf * 0 = NaN on every diagonal pair; the NaN flows into the location embeddings, AdamW writes
it into the weights, and the next forward produces a NaN loss.

ORIGIN: "coupling", the module computing the pairwise distance kernel: the unsafe sqrt of an
exact zero is inside it.

Fix: d_ij = sqrt(sum((z_i - z_j)^2) + 1e-8) (epsilon inside the sqrt), same model, data,
optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "coupling"
SOURCE = ("PyTorch issues on NaN gradients of torch.norm / sqrt at zero distance (e.g. pytorch#2421); "
          "gravity/metapopulation spatial kernels in learned epidemic GNNs (Kapoor et al. 2020)")


class DistanceKernel(nn.Module):
    def __init__(self, n_nodes, eps):
        super().__init__()
        self.loc = nn.Embedding(n_nodes, 2)
        self.log_ell = nn.Parameter(torch.zeros(()))
        self.eps = eps

    def forward(self):
        z = self.loc.weight
        diff = z.unsqueeze(1) - z.unsqueeze(0)
        d = torch.sqrt((diff ** 2).sum(-1) + self.eps)
        K = torch.exp(-d / self.log_ell.exp())
        return K / K.sum(1, keepdim=True)


class MetapopGNN(nn.Module):
    def __init__(self, n_nodes, n_feat, hidden, rounds, eps):
        super().__init__()
        self.coupling = DistanceKernel(n_nodes, eps)
        self.enc = nn.Linear(n_feat, hidden)
        self.msg = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(rounds))
        self.act = nn.SiLU()
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):  # x: (B, nodes, feat)
        K = self.coupling()
        h = self.act(self.enc(x))
        for m in self.msg:
            h = h + self.act(K @ m(h))
        return self.out(h).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_nodes = [40, 56, 48][seed % 3]
    hidden = [32, 48, 24][seed % 3]
    rounds = [2, 3, 2][seed % 3]
    lr = [3e-3, 2e-3, 5e-3][seed % 3]
    bs = [8, 6, 10][seed % 3]
    steps = 100
    pos = torch.rand(n_nodes, 2, generator=g)
    Kt = torch.exp(-torch.cdist(pos, pos) / 0.15)
    Kt = Kt / Kt.sum(1, keepdim=True)
    X = torch.randn(steps * bs, n_nodes, 6, generator=g)
    Y = (Kt @ (0.8 * X[..., 0] - 0.5 * X[..., 1]).unsqueeze(-1)).squeeze(-1) + 0.3 * X[..., 2]
    Y = (Y - Y.mean()) / Y.std()
    model = MetapopGNN(n_nodes, 6, hidden, rounds, eps=1e-8 if fixed else 0.0)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    loss_fn = nn.L1Loss()
    batches = [(X[i * bs:(i + 1) * bs], Y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
