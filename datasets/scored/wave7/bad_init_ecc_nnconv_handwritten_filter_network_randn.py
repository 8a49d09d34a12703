"""Edge-conditioned convolution (ECC / NNConv, Simonovsky & Komodakis 2017; Gilmer et al. MPNN
edge network) written by hand for a molecule-like graph regression task: a filter-generating
network maps each edge's features (a 6-d RBF expansion of the bond length) to a full din x dout
weight matrix, messages are h_src @ Theta(e), mean-aggregated per node, and four such layers
feed a sum readout that regresses a per-graph property. The filter network's weight was declared
as nn.Parameter(torch.randn(edge_dim, din * dout)) -- unit-variance entries, no 1/sqrt(fan_in)
-- so every generated Theta has entries of std ~1 instead of ~1/sqrt(din) and each layer
multiplies the node-state scale by roughly 3-4x. After four layers the readout is ~1e2 times the
target scale at step 0 (MSE ~1e4 on standardised targets), the gradients are as huge, and the
first momentum-SGD update blows the weights up: the loss is inf/NaN from step 1-2.
Fixed: the same parameter initialised with kaiming/xavier-style scale (uniform, bound
1/sqrt(edge_dim * din)), i.e. only the init changes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "convs.0.filter_net"
SOURCE = ("NNConv/ECC edge networks (Simonovsky & Komodakis 2017, Gilmer et al. 2017); "
          "hand-written layers initialised with torch.randn -> activations grow ~sqrt(fan_in) per layer "
          "(CS231n 'weight initialisation' notes, 'loss is huge / NaN in my custom GNN layer' threads)")

EDGE_DIM, HID = 6, 24


class FilterNet(nn.Module):
    """edge features -> (din x dout) weight matrix per edge"""

    def __init__(self, edge_dim, din, dout, proper_init):
        super().__init__()
        self.din, self.dout = din, dout
        self.weight = nn.Parameter(torch.empty(edge_dim, din * dout))
        self.bias = nn.Parameter(torch.zeros(din * dout))
        self.proper_init = proper_init

    def reset_parameters(self, gen):
        with torch.no_grad():
            if self.proper_init:
                bound = 1.0 / math.sqrt(self.weight.shape[0] * self.din)
                self.weight.copy_((torch.rand(self.weight.shape, generator=gen) * 2 - 1) * bound)
            else:
                self.weight.copy_(torch.randn(self.weight.shape, generator=gen))

    def forward(self, e):
        return (e @ self.weight + self.bias).view(-1, self.din, self.dout)


class ECCLayer(nn.Module):
    def __init__(self, din, dout, proper_init):
        super().__init__()
        self.filter_net = FilterNet(EDGE_DIM, din, dout, proper_init)
        self.root = nn.Linear(din, dout)

    def forward(self, h, edge_index, e):
        src, dst = edge_index
        theta = self.filter_net(e)
        msg = torch.bmm(h[src].unsqueeze(1), theta).squeeze(1)
        agg = torch.zeros(h.shape[0], msg.shape[1]).index_add_(0, dst, msg)
        deg = torch.zeros(h.shape[0]).index_add_(0, dst, torch.ones(dst.shape[0])).clamp_min(1)
        return agg / deg[:, None] + self.root(h)


class ECCNet(nn.Module):
    def __init__(self, proper_init):
        super().__init__()
        self.embed = nn.Linear(4, HID)
        self.convs = nn.ModuleList([ECCLayer(HID, HID, proper_init) for _ in range(4)])
        self.out = nn.Linear(HID, 1)
        gen = torch.Generator().manual_seed(int(torch.randint(0, 2**31 - 1, (1,))))
        for conv in self.convs:
            conv.filter_net.reset_parameters(gen)

    def forward(self, node_feat, edge_index, edge_feat, graph_id, n_graphs):
        h = self.embed(node_feat)
        for conv in self.convs:
            h = F.relu(conv(h, edge_index, edge_feat))
        pooled = torch.zeros(int(n_graphs.shape[0]), h.shape[1]).index_add_(0, graph_id, h)
        return self.out(pooled).squeeze(-1)


def _rbf(d):
    centres = torch.linspace(0.8, 2.0, EDGE_DIM)
    return torch.exp(-((d[:, None] - centres) ** 2) / 0.1)


def _make_batch(g, n_graphs=32):
    xs, eis, efs, gids, ys = [], [], [], [], []
    off = 0
    for gi in range(n_graphs):
        n = int(torch.randint(8, 15, (1,), generator=g))
        types = torch.randint(0, 4, (n,), generator=g)
        pos = torch.randn(n, 3, generator=g) * 1.2
        d = torch.cdist(pos, pos)
        adj = (d < 1.9) & ~torch.eye(n, dtype=torch.bool)
        src, dst = adj.nonzero(as_tuple=True)
        dist = d[src, dst]
        # target: sum over bonds of a type-pair dependent pair energy
        w = torch.tensor([0.5, 1.0, 1.5, 2.0])
        y = (w[types[src]] * w[types[dst]] * torch.exp(-dist)).sum() / 2 + 0.3 * (types == 3).sum()
        xs.append(F.one_hot(types, 4).float()); eis.append(torch.stack([src, dst]) + off)
        efs.append(_rbf(dist)); gids.append(torch.full((n,), gi)); ys.append(y)
        off += n
    return (torch.cat(xs), torch.cat(eis, 1), torch.cat(efs), torch.cat(gids), torch.zeros(n_graphs)), torch.stack(ys)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    pool = [_make_batch(g) for _ in range(20)]
    ymean = torch.cat([p[1] for p in pool]).mean()
    ystd = torch.cat([p[1] for p in pool]).std()
    pool = [(x, (y - ymean) / ystd) for x, y in pool]
    steps = 200
    batches = [pool[s % len(pool)] for s in range(steps)]
    model = ECCNet(proper_init=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=3e-3, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
