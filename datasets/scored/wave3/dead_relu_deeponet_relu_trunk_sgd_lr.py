"""DeepONet (Lu et al. 2021) learning the solution operator of a 1-D steady diffusion-reaction
problem: the branch net reads the source term sampled at fixed sensors (non-negative
concentrations), the trunk net reads the query coordinate y in [0, 1], and the prediction is the
dot product of the two feature vectors plus a bias. Both nets use ReLU (the trunk also applies
ReLU to its output basis, trunk.4 -> trunk.5), and the run uses SGD with momentum at lr 0.4-0.5
(copied from a recipe with a much smaller loss scale). The trunk's only input is y in [0, 1], so
each trunk unit is a ramp over a 1-D interval; the first overshooting updates push the output
basis pre-activations of trunk.4 below zero over the whole interval, the basis functions are then
identically zero, no gradient reaches the trunk or the branch, and the operator collapses to the
constant bias. The loss then stays flat with
finite values. Fixed: lr 0.01 (nothing else changed)."""
import torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "trunk.4"
SOURCE = "DeepONet reimplementations (DeepXDE issues: 'loss does not decrease / output constant with ReLU and large lr'); dying ReLU (Lu et al. 2019)"

class DeepONet(nn.Module):
    def __init__(self, m, hid, p, depth):
        super().__init__()
        def mlp(din):
            layers, d = [], din
            for _ in range(depth):
                layers += [nn.Linear(d, hid), nn.ReLU()]; d = hid
            layers.append(nn.Linear(d, p))
            return nn.Sequential(*layers)
        self.branch = mlp(m)
        self.trunk = nn.Sequential(nn.Linear(1, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(),
                                   nn.Linear(hid, p), nn.ReLU())   # activation on the trunk output, as in DeepXDE
        self.bias = nn.Parameter(torch.zeros(1))
    def forward(self, u, y):
        b = self.branch(u)                 # (B, p)
        t = self.trunk(y)                  # (B, Q, p)
        return torch.einsum("bp,bqp->bq", b, t) + self.bias

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(211 + seed)
    hid, p, depth, bs, lr, steps = [(40, 24, 2, 32, 0.5, 150), (32, 16, 3, 16, 0.5, 120), (48, 32, 2, 64, 0.4, 180)][seed]
    m, Q = 24, 32
    model = DeepONet(m, hid, p, depth)
    xs = torch.linspace(0, 1, m)
    ys = torch.linspace(0, 1, Q)
    # solve -u'' + k u = f, u(0)=u(1)=0 on a fine grid for random positive sources
    N = 64; h = 1.0 / (N + 1); grid = torch.linspace(h, 1 - h, N)
    def solve(f_grid, k):
        A = (torch.diag(torch.full((N,), 2.0)) - torch.diag(torch.ones(N - 1), 1) - torch.diag(torch.ones(N - 1), -1)) / h ** 2 + k * torch.eye(N)
        return torch.linalg.solve(A, f_grid)
    def make():
        c = torch.rand(bs, 3, generator=g)
        w = 0.05 + 0.15 * torch.rand(bs, 3, generator=g)
        a = 5 + 20 * torch.rand(bs, 3, generator=g)
        src = lambda x: (a[:, :, None] * torch.exp(-((x[None, None] - c[:, :, None]) / w[:, :, None]) ** 2)).sum(1)
        U = torch.stack([solve(fg, 5.0) for fg in src(grid)])
        uq = torch.stack([torch.interp(ys, grid, Ui) if hasattr(torch, "interp") else
                          torch.nn.functional.interpolate(Ui[None, None], size=Q, mode="linear", align_corners=True)[0, 0] for Ui in U])
        return (src(xs) / 10.0, ys[None, :, None].expand(bs, Q, 1).contiguous()), uq
    data = [make() for _ in range(10)]
    batches = [data[i % 10] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
