"""GIN (sum aggregation, MLP updates, no BatchNorm) graph classifier trained with SGD+momentum.
Every Linear gets the Caffe/VGG-style gaussian std=0.01 init (torchvision VGG _initialize_weights,
copied over): each layer shrinks activations by ~0.01*sqrt(fan_in/2), so after 5 GIN layers the
readout sees ~1e-9 signals, logits are constant, gradients vanish and the loss sits at log(3).
fixed=True: xavier_uniform weights (biases zero in both runs); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "convs.0.mlp.0"
SOURCE = ("GIN (Xu et al. 2019) with gaussian(0, 0.01) init as in Caffe/torchvision VGG; He et al. 2015 "
          "report deep plain nets with std=0.01 init stall (activations/gradients vanish geometrically "
          "with depth), Glorot & Bengio 2010")

N_NODES, F_IN, N_CLS = 16, 9, 3
LAYERS = 5
LR = 0.002


class GINConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(d_in, d_out), nn.ReLU(), nn.Linear(d_out, d_out), nn.ReLU())

    def forward(self, h, adj):
        return self.mlp((1 + self.eps) * h + adj @ h)


class GIN(nn.Module):
    def __init__(self, d_in=F_IN, hidden=64, layers=LAYERS, n_cls=N_CLS):
        super().__init__()
        dims = [d_in] + [hidden] * layers
        self.convs = nn.ModuleList([GINConv(dims[i], dims[i + 1]) for i in range(layers)])
        self.readout = nn.Linear(hidden, n_cls)

    def forward(self, x, adj):
        h = x
        for conv in self.convs:
            h = conv(h, adj)
        return self.readout(h.mean(1))         # mean readout over nodes


def _graph(c, g):
    n = N_NODES
    A = torch.zeros(n, n)
    if c == 0:      # Erdos-Renyi, mean degree ~4
        A = (torch.rand(n, n, generator=g) < 4.0 / (n - 1)).float()
    elif c == 1:    # Watts-Strogatz ring lattice k=4, 10% rewired
        for i in range(n):
            for k in (1, 2):
                j = (i + k) % n
                if torch.rand(1, generator=g).item() < 0.1:
                    j = int(torch.randint(0, n, (1,), generator=g))
                A[i, j] = 1.0
    else:           # two dense communities, sparse between
        blk = (torch.arange(n) < n // 2)
        same = blk.unsqueeze(0) == blk.unsqueeze(1)
        p = torch.where(same, torch.tensor(0.45), torch.tensor(0.04))
        A = (torch.rand(n, n, generator=g) < p).float()
    A = torch.triu(A, 1)
    A = A + A.t()
    A = (A > 0).float()
    deg = A.sum(1).long().clamp(max=F_IN - 1)
    x = torch.nn.functional.one_hot(deg, F_IN).float()
    return x, A


def build(seed: int, fixed: bool = False) -> dict:
    steps, bs = 150, 32
    g = torch.Generator().manual_seed(300 + seed)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLS, (bs,), generator=g)
        xs, As = zip(*[_graph(int(c), g) for c in y])
        batches.append(((torch.stack(xs), torch.stack(As)), y))
    torch.manual_seed(seed)
    model = GIN()
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)  # Caffe/VGG-style gaussian std=0.01
                nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
