"""Pass-availability model on optical-tracking frames: for each of the 11 attackers, predict
whether they are "available" (open for a pass) from a graph network over all 22 players whose
edge weights are a Gaussian kernel of pairwise distance, exp(-d^2 / 2 sigma^2), computed from the
raw tracking coordinates in centimetres (sigma = 10 m = 1000 cm).  Node features fed to the
Linear layers are normalised; BCE-with-logits; Adam; mixed precision with fp16 autocast to speed
up the all-pairs step.

Mechanism: the kernel computes squared distances the usual fast way, from one Gram matrix
G = P P^T (batched matmul): d^2_ij = G_ii + G_jj - 2 G_ij.  In fp32 this is fine; under fp16
autocast the matmul output is half precision, and G_ij for players at ~(8000, 5000) cm is ~9e7,
far beyond fp16's max of 65504: the Gram entries become inf, inf + inf - inf = NaN, the
adjacency is NaN and so is the loss, from the first step.

ORIGIN: ``kernel`` - the distance-kernel module is where the half-precision values pass 65504.

Fix: run the distance kernel in fp32 (autocast disabled for that op, inputs cast to float); the
rest of the model stays under fp16 autocast.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "kernel"
SOURCE = ("Known pattern: squared-distance / Gram computations overflow in fp16 under AMP "
          "(PyTorch AMP docs on ops that need fp32 range; issues 'cdist/pairwise distance NaN "
          "with autocast'; tracking data delivered in centimetres, e.g. ChyronHego/TRACAB).")

SIGMA_CM = 1000.0


class GaussianDistanceKernel(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32

    def _k(self, pos):
        gram = torch.bmm(pos, pos.transpose(1, 2))                 # a.b for all pairs
        sq = torch.diagonal(gram, dim1=1, dim2=2)                  # |a|^2
        d2 = sq.unsqueeze(2) + sq.unsqueeze(1) - 2 * gram
        return torch.exp(-d2.clamp(min=0) / (2 * SIGMA_CM ** 2))

    def forward(self, pos_cm):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._k(pos_cm.float())
        return self._k(pos_cm)


class AvailabilityGNN(nn.Module):
    def __init__(self, d_in, hidden, n_layers, fp32_kernel):
        super().__init__()
        self.kernel = GaussianDistanceKernel(fp32_kernel)
        self.inp = nn.Linear(d_in, hidden)
        self.layers = nn.ModuleList([nn.Linear(2 * hidden, hidden) for _ in range(n_layers)])
        self.out = nn.Linear(hidden, 1)

    def forward(self, feats, pos_cm):
        adj = self.kernel(pos_cm)
        adj = adj / adj.sum(-1, keepdim=True)
        h = torch.relu(self.inp(feats))
        for lin in self.layers:
            agg = torch.bmm(adj.to(h.dtype), h)
            h = torch.relu(lin(torch.cat([h, agg], -1)))
        return self.out(h[:, :11]).squeeze(-1)                      # attackers only


def _data(g, n):
    pos = torch.rand(n, 22, 2, generator=g) * torch.tensor([10500.0, 6800.0])
    vel = 150 * torch.randn(n, 22, 2, generator=g)                  # cm/s
    team = torch.cat([torch.ones(11), -torch.ones(11)]).expand(n, 22).unsqueeze(-1)
    d = torch.cdist(pos[:, :11], pos[:, 11:])                       # attacker-defender
    y = (d.min(-1).values > 700.0).float()                          # no defender within 7 m
    feats = torch.cat([pos / torch.tensor([10500.0, 6800.0]) - 0.5, vel / 150.0, team], -1)
    return feats, pos, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12000 + seed)
    hidden = [64, 48, 96][seed % 3]
    n_layers = [2, 3, 2][seed % 3]
    lr = [2e-3, 1e-3, 1.5e-3][seed % 3]
    bs = [32, 48, 24][seed % 3]
    steps = 100
    model = AvailabilityGNN(5, hidden, n_layers, fp32_kernel=fixed)
    feats, pos, y = _data(g, bs * steps)
    batches = [((feats[i * bs:(i + 1) * bs], pos[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs])
               for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
