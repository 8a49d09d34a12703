"""Critic of Bello et al. (2016, "Neural combinatorial optimization with reinforcement
learning") for 2-D Euclidean TSP: city coordinates -> linear embedding -> LSTM encoder ->
process block of P attention glimpses over the encoder states -> 2-layer ReLU decoder -> the
expected tour length (the baseline for REINFORCE). Here it is pre-trained with MSE on the
length of the nearest-neighbour tour of each instance. Adam.

Mechanism: the instances come from a depot/customer data set with coordinates in kilometres
(service regions of 100..1000 km, relative to the depot) and the tour-length targets are in kilometres too (several thousand). The
paper's setting (and the model's defaults) assume cities in the unit square. The embedding
outputs values of hundreds, the LSTM gates and the glimpse softmax saturate from step 0, and
the MSE starts at ~1e7: with Adam's lr-sized steps the output layer would need tens of
thousands of steps just to reach the target scale, so the loss stays on its initial plateau.

ORIGIN: ``embedding`` - the first layer that receives the unscaled coordinates.

Fix: scale coordinates to the unit square (divide by the 1000 km map extent) and standardise
the tour-length targets with the training-set mean and std.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "embedding"
SOURCE = ("Bello et al. 2016 actor-critic for TSP (pemami4911/neural-combinatorial-rl-pytorch "
          "critic) trained on real-world coordinates in km instead of the unit square")


class Critic(nn.Module):
    def __init__(self, d, glimpses):
        super().__init__()
        self.glimpses = glimpses
        self.embedding = nn.Linear(2, d)
        self.encoder = nn.LSTM(d, d, batch_first=True)
        self.W_ref = nn.Linear(d, d)
        self.W_q = nn.Linear(d, d)
        self.v = nn.Linear(d, 1, bias=False)
        self.decoder = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, coords):
        enc, (h, _) = self.encoder(self.embedding(coords))
        q = h[-1]
        ref = self.W_ref(enc)
        for _ in range(self.glimpses):
            u = self.v(torch.tanh(ref + self.W_q(q).unsqueeze(1))).squeeze(-1)
            q = (torch.softmax(u, -1).unsqueeze(-1) * enc).sum(1)
        return self.decoder(q).squeeze(-1)


def _nn_tour_length(xy):
    B, n, _ = xy.shape
    d = torch.cdist(xy, xy)
    visited = torch.zeros(B, n, dtype=torch.bool)
    cur = torch.zeros(B, dtype=torch.long)
    visited[:, 0] = True
    total = torch.zeros(B)
    ar = torch.arange(B)
    for _ in range(n - 1):
        dc = d[ar, cur].masked_fill(visited, float("inf"))
        nxt = dc.argmin(-1)
        total += dc[ar, nxt]
        visited[ar, nxt] = True
        cur = nxt
    return total + d[ar, cur, 0]


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=64, P=1, n=20, B=32, lr=1e-3, steps=100),
           dict(d=48, P=2, n=15, B=48, lr=2e-3, steps=90),
           dict(d=96, P=1, n=12, B=24, lr=1e-3, steps=110)][seed % 3]
    torch.manual_seed(seed)
    model = Critic(cfg["d"], cfg["P"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(4040 + seed)
    raw = []
    for _ in range(cfg["steps"]):
        # each instance is one service region of side 100..1000 km, coordinates relative to
        # the depot corner of the region
        side = 100.0 + 900.0 * torch.rand(cfg["B"], 1, 1, generator=g)
        xy_km = side * torch.rand(cfg["B"], cfg["n"], 2, generator=g)
        raw.append((xy_km, _nn_tour_length(xy_km)))
    if fixed:
        ys = torch.cat([y for _, y in raw])
        mu, sd = ys.mean(), ys.std()
        batches = [(xy / 1000.0, (y - mu) / sd) for xy, y in raw]
    else:
        batches = raw
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
