"""Graph attention network on weather-station graphs, hit by one station reporting pressure in Pa instead of hPa.

Mechanism
---------
Each sample is a graph of n = 12-20 weather stations (k-nearest-neighbour
edges on their 2-D positions).  Node features are standardised readings
(temperature, humidity, pressure, wind u/v, elevation; |z| < 4); the target is
every station's standardised next-hour temperature, a diffusion of its
neighbours' readings.  A 2-layer GAT (Velickovic et al. 2018; dense masked
attention, ELU) is trained with SGD + momentum (lr 0.01-0.02), and the loss falls
smoothly from ~0.25-0.35 to ~0.05-0.1.

At one step k (seed-dependent, 90-190; 177 / 142 / 131 for seeds 0 / 1 / 2)
one station of one graph has its pressure logged in Pa instead of hPa.  After
the usual standardisation ((p - 1013 hPa) / 8 hPa) that reading is ~ +1.25e4
instead of ~ +-1.  The station's W h is ~1e4 times larger than normal and
dominates the attention messages it sends, so the MSE on that batch is
~1e2-4e4 (vs ~0.08) -- finite, but the gradient norm is ~2e4-7e5 (vs ~0.05).
One SGD step moves the weights by lr * |g| ~ 1e2-1e4 (update/weight ratio
>> 1), the momentum buffer carries it on, and on the following *clean*
batches the loss is 4e9-7e19, then 1e32/inf/NaN: non-finite 2-3 steps after
the corrupt batch.  The data are the only problem: every other batch is clean.

ORIGIN = None: the root cause is a corrupt sample in the data, not a module.

fixed=True: the same batches, but features are clipped to the physically
plausible standardised range [-6, 6] before batching (the usual robust
preprocessing); this only changes the corrupt reading (clean features never
exceed |z| = 4).  Model, init, optimizer and lr are unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Unit mix-ups / unmasked sentinel readings in sensor data (e.g. pressure in Pa vs hPa, "
          "station outliers in weather-graph forecasting such as METR-LA/WeatherBench pipelines); "
          "'one bad batch made the loss NaN' reports; GAT (Velickovic et al. 2018)")


class DenseGATLayer(nn.Module):
    def __init__(self, d_in, d_out, heads, concat=True):
        super().__init__()
        self.W = nn.Linear(d_in, heads * d_out, bias=False)
        self.a_src = nn.Parameter(torch.randn(heads, d_out) * 0.1)
        self.a_dst = nn.Parameter(torch.randn(heads, d_out) * 0.1)
        self.heads, self.d_out, self.concat = heads, d_out, concat

    def forward(self, x, adj):                    # x (B,n,d), adj (B,n,n) with self loops
        B, n, _ = x.shape
        h = self.W(x).view(B, n, self.heads, self.d_out)
        e_src = (h * self.a_src).sum(-1)          # (B,n,H)
        e_dst = (h * self.a_dst).sum(-1)
        e = F.leaky_relu(e_dst[:, :, None, :] + e_src[:, None, :, :], 0.2)   # (B,i,j,H)
        e = e.masked_fill(adj[..., None] == 0, float("-inf"))
        alpha = torch.softmax(e, dim=2)
        out = torch.einsum("bijh,bjhd->bihd", alpha, h)
        return out.reshape(B, n, -1) if self.concat else out.mean(2)


class GAT(nn.Module):
    def __init__(self, d_in, hidden, heads):
        super().__init__()
        self.gat1 = DenseGATLayer(d_in, hidden, heads)
        self.act = nn.ELU()
        self.gat2 = DenseGATLayer(hidden * heads, hidden, 1, concat=False)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, adj):
        h = self.act(self.gat1(x, adj))
        h = self.act(self.gat2(h, adj))
        return self.out(h).squeeze(-1)


def make_graph_batch(g, bs, n, k_nn):
    pos = torch.rand(bs, n, 2, generator=g)
    d = torch.cdist(pos, pos)
    idx = d.topk(k_nn + 1, largest=False).indices
    adj = torch.zeros(bs, n, n).scatter_(2, idx, 1.0)
    adj = ((adj + adj.transpose(1, 2)) > 0).float()
    x = torch.randn(bs, n, 6, generator=g).clamp(-3.5, 3.5)
    deg = adj.sum(-1, keepdim=True)
    nb = (adj @ x) / deg
    y = 0.6 * nb[..., 0] + 0.3 * x[..., 0] - 0.2 * nb[..., 2] + 0.15 * nb[..., 3] * nb[..., 4]
    y = y + 0.05 * torch.randn(bs, n, generator=g)
    return x, adj, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(8000 + seed)
    steps = 250
    n = [16, 12, 20][seed % 3]
    bs = 8
    bad_step = int(torch.randint(90, 191, (1,), generator=g))
    batches = []
    for step in range(steps):
        x, adj, y = make_graph_batch(g, bs, n, 3)
        if step == bad_step:                      # one station logs pressure in Pa, not hPa
            gi = int(torch.randint(0, bs, (1,), generator=g))
            ni = int(torch.randint(0, n, (1,), generator=g))
            p_hpa = 1013.0 + 8.0 * x[gi, ni, 2]
            x[gi, ni, 2] = (100.0 * p_hpa - 1013.0) / 8.0
        if fixed:
            x = x.clamp(-6.0, 6.0)
        batches.append(((x, adj), y))
    torch.manual_seed(seed)
    model = GAT(6, [16, 12, 16][seed % 3], [4, 4, 3][seed % 3])
    opt = torch.optim.SGD(model.parameters(), lr=[0.02, 0.015, 0.01][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
