"""Healthy NODE (oblivious differentiable trees) with sparse choice functions.

What looks alarming: a NODE model (Popov et al. 2019) made of ODST layers whose feature
choice uses sparsemax and whose split function is sparsemoid (a hard-clipped linear
sigmoid).  The data-aware initialisation sets each temperature to the median distance to
its threshold, so about half of all per-sample split decisions sit in the flat part of
sparsemoid (routing probability exactly 0 or 1, per-sample derivative exactly 0) for the
whole run, 50-60% of the sparsemax feature-selection logits receive an exactly-zero gradient
on every batch, and leaf probabilities are products of many exact zeros and ones.  A tool
looking for "saturated units with zero gradients" sees a lot of them.

Why it is healthy: the sparsity is by design (that is what makes the trees oblivious and
near-hard); the leaf responses and the splits that are inside their band do get gradient,
and the regression loss decreases steadily.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("NODE: Neural Oblivious Decision Ensembles (Popov, Morozov & Babenko, ICLR 2020), "
          "ODST with sparsemax / sparsemoid choice functions and data-aware initialisation "
          "(Qwicen/node).")


def sparsemax(z, dim):
    z_sorted, _ = torch.sort(z, dim=dim, descending=True)
    shape = [1] * z.dim()
    shape[dim] = -1
    k = torch.arange(1, z.size(dim) + 1, dtype=z.dtype).view(shape)
    cssv = z_sorted.cumsum(dim) - 1
    support = (z_sorted * k > cssv).to(z.dtype)
    k_z = support.sum(dim=dim, keepdim=True)
    tau = cssv.gather(dim, k_z.long() - 1) / k_z
    return torch.clamp(z - tau, min=0)


def sparsemoid(x):
    return (0.5 * x + 0.5).clamp(0, 1)


class ODST(nn.Module):
    def __init__(self, in_features, num_trees, depth, tree_dim):
        super().__init__()
        self.depth, self.num_trees, self.tree_dim = depth, num_trees, tree_dim
        self.response = nn.Parameter(torch.randn(num_trees, tree_dim, 2 ** depth))
        self.feature_selection_logits = nn.Parameter(torch.rand(in_features, num_trees, depth))
        self.feature_thresholds = nn.Parameter(torch.zeros(num_trees, depth))
        self.log_temperatures = nn.Parameter(torch.zeros(num_trees, depth))
        codes = torch.arange(2 ** depth).unsqueeze(0).bitwise_right_shift(
            torch.arange(depth).unsqueeze(1)) & 1                           # (depth, 2**depth)
        self.register_buffer("bin_codes_1hot", torch.stack([codes, 1 - codes], -1).float())

    def feature_values(self, x):
        w = sparsemax(self.feature_selection_logits, dim=0)
        return torch.einsum("bi,ind->bnd", x, w)

    @torch.no_grad()
    def data_aware_init(self, x, beta=1.0):
        fv = self.feature_values(x)
        q = torch.rand(self.num_trees, self.depth, generator=torch.Generator().manual_seed(0))
        q = 100 * q.clamp(0.05, 0.95)
        flat = fv.flatten(1).t()
        thr = torch.stack([torch.quantile(flat[i], q.flatten()[i] / 100) for i in range(flat.size(0))])
        self.feature_thresholds.copy_(thr.view(self.num_trees, self.depth))
        dev = (fv - self.feature_thresholds).abs().flatten(1)
        temp = torch.quantile(dev, 0.5 * beta, dim=0).view(self.num_trees, self.depth)
        self.log_temperatures.copy_(torch.log(temp + 1e-6))

    def forward(self, x):
        fv = self.feature_values(x)                                          # (B, T, D)
        logits = (fv - self.feature_thresholds) * torch.exp(-self.log_temperatures)
        bins = sparsemoid(torch.stack([-logits, logits], -1))               # (B, T, D, 2)
        matches = torch.einsum("btds,dcs->btdc", bins, self.bin_codes_1hot)
        leaf = matches.prod(dim=2)                                           # (B, T, 2**D)
        return torch.einsum("btc,tkc->btk", leaf, self.response).flatten(1)


class DenseBlock(nn.Module):
    def __init__(self, in_features, layer_dim, num_layers, depth, tree_dim):
        super().__init__()
        self.layers = nn.ModuleList()
        d = in_features
        for _ in range(num_layers):
            self.layers.append(ODST(d, layer_dim, depth, tree_dim))
            d += layer_dim * tree_dim
        self.tree_dim = tree_dim

    def forward(self, x):
        outs = []
        for layer in self.layers:
            h = layer(x)
            x = torch.cat([x, h], -1)
            outs.append(h)
        out = torch.cat(outs, -1).view(x.size(0), -1, self.tree_dim)
        return out.mean(1)[:, 0]

    @torch.no_grad()
    def data_aware_init(self, x):
        for layer in self.layers:
            layer.data_aware_init(x)
            x = torch.cat([x, layer(x)], -1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2500 + seed)
    n_feat = [10, 14, 8][seed]
    layer_dim = [32, 24, 48][seed]
    num_layers = [2, 2, 1][seed]
    depth = [4, 5, 4][seed]
    lr = [3e-3, 5e-3, 3e-3][seed]
    bs = [128, 192, 128][seed]
    steps = [150, 140, 160][seed]

    n = bs * steps
    x = torch.randn(n, n_feat, generator=g)
    y = (torch.where(x[:, 0] > 0.3, 1.5, -0.5) + torch.where(x[:, 1] * x[:, 2] > 0, 0.8, -0.8)
         + 0.6 * torch.sin(2 * x[:, 3]) + 0.3 * torch.randn(n, generator=g))
    y = (y - y.mean()) / y.std()
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]

    model = DenseBlock(n_feat, layer_dim, num_layers, depth, tree_dim=1)
    model.data_aware_init(batches[0][0])
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
