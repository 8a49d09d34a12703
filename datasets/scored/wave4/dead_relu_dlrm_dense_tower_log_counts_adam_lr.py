"""DLRM-style dense tower (bottom MLP over 13 log1p-transformed count features -> ReLU MLP -> top
layer predicting a standardised engagement score) trained with Adam at lr 0.3-0.4, the value the
recipe used for its sparse embedding tables (Adagrad/SparseAdam), reused for the dense tower. All
dense inputs are non-negative (log counts), so once a unit's weights and bias are pushed negative it
is negative for every row. Adam's large fixed-size steps do exactly that within a few steps: every
unit of the first layer ends up with zero ReLU output on all data, its gradient is exactly zero and
it never recovers. The tower collapses to a constant prediction and the MSE sits at the target
variance (~1.0) for the rest of training: a silent stall, no NaN. At lr 1e-3 the units stay alive."""
import torch, torch.nn as nn
CAUSE = "dead_relu"
ORIGIN = "bottom_mlp.0"
SOURCE = "DLRM dense arch trained with the sparse-embedding recipe lr; 'all ReLU outputs zero, constant predictions' threads"

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    F = 13; w1 = [64, 48, 96][seed % 3]; w2 = [32, 32, 48][seed % 3]
    steps = [120, 150, 100][seed % 3]; bs = [64, 128, 64][seed % 3]
    lr = 1e-3 if fixed else [0.3, 0.3, 0.4][seed % 3]
    model = nn.Sequential()
    model.add_module("bottom_mlp", nn.Sequential(nn.Linear(F, w1), nn.ReLU(), nn.Linear(w1, w2), nn.ReLU()))
    model.add_module("top", nn.Linear(w2, 1))
    wt = torch.randn(F, generator=g) / F ** 0.5
    def feats(n):
        counts = torch.poisson(torch.exp(2 * torch.rand(n, F, generator=g)) * 3, generator=g)
        x = torch.log1p(counts)
        return x, torch.tanh(2 * (x @ wt - (x @ wt).median())) + 0.5 * torch.sin(2 * x[:, 0])
    _, zref = feats(4096); zm, zs = zref.mean(), zref.std()   # target standardised with dataset stats
    def make():
        x, z = feats(bs)
        return x, ((z - zm) / zs + 0.1 * torch.randn(bs, generator=g)).unsqueeze(1)
    batches = [make() for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
