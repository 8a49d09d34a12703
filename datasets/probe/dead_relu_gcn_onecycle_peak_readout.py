"""GCN graph-regression (molecule-like graphs, mean-pool readout MLP) trained with Adam under a
OneCycleLR schedule whose max_lr (0.15, "picked from an LR finder") is far too high for ReLU units.
The first ~20 steps at low lr train normally; as the schedule ramps towards its peak, large
updates push the readout's hidden ReLUs (and most GCN channels) negative for every graph, they
never fire again, the prediction becomes a constant and the loss plateaus at the target variance.
fixed=True lowers max_lr tenfold (same schedule shape, data, model and init).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "readout.1"
SOURCE = ("dying ReLU after large updates (CS231n notes; StackOverflow 'GNN predicts the same value for "
          "every graph'); OneCycleLR with max_lr read off an LR-range test (fastai / torch-lr-finder); "
          "GCN of Kipf & Welling 2017 with a mean-pool readout as in PyG graph-regression examples")

N_MAX, F_IN, H = 16, 8, 64


class GCNLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.act = nn.ReLU()

    def forward(self, h, a_norm):
        return self.act(self.lin(torch.bmm(a_norm, h)))


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(F_IN, H)
        self.convs = nn.ModuleList([GCNLayer(H) for _ in range(3)])
        self.readout = nn.Sequential(nn.Linear(H, H), nn.ReLU(), nn.Linear(H, 1))

    def forward(self, x, a_norm, mask):
        h = self.inp(x)
        for conv in self.convs:
            h = conv(h, a_norm)
        pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return self.readout(pooled).squeeze(-1)


def _graphs(g, bs):
    n = torch.randint(10, N_MAX + 1, (bs,), generator=g)
    mask = (torch.arange(N_MAX)[None] < n[:, None]).float()
    adj = (torch.rand(bs, N_MAX, N_MAX, generator=g) < 0.25).float()
    adj = torch.triu(adj, 1)
    adj = (adj + adj.transpose(1, 2)) * mask[:, :, None] * mask[:, None, :]
    a_hat = adj + torch.diag_embed(mask)                      # self loops
    dinv = a_hat.sum(-1).clamp_min(1).rsqrt()
    a_norm = dinv[:, :, None] * a_hat * dinv[:, None, :]       # D^-1/2 (A+I) D^-1/2
    x = torch.randn(bs, N_MAX, F_IN, generator=g) * mask[..., None]
    agg = torch.bmm(a_norm, x)
    node = torch.relu(agg[..., 0] + 0.5 * agg[..., 1] - 0.3 * x[..., 2]) + 0.5 * agg[..., 3] * x[..., 4]
    y = (node * mask).sum(1) / mask.sum(1)
    return (x, a_norm, mask), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 200, 64
    data = [_graphs(g, bs) for _ in range(steps)]
    ys = torch.cat([y for _, y in data])
    mu, sd = ys.mean(), ys.std()
    batches = [(x, (y - mu) / sd) for x, y in data]            # standardised targets
    model = GCN()
    max_lr = 0.015 if fixed else 0.15
    opt = torch.optim.Adam(model.parameters(), lr=max_lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr, total_steps=steps, pct_start=0.3)
    opt.register_step_post_hook(lambda *a, **k: sched.step())  # scheduler stepped with the optimizer
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
