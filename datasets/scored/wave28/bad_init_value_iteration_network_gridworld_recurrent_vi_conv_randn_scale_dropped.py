"""Value Iteration Network (Tamar et al. 2016) imitating shortest-path actions on random gridworlds.

Mechanism: the VI module applies the same 3x3 "transition" convolution K times,
    q = conv_r(r) + conv_v(v);  v = max_a q,
so its gain is raised to the K-th power.  The original Theano/TF code draws these kernels with
np.random.randn(...) * 0.01; this port kept torch.randn(...) and dropped the scale, so
conv_v has unit-variance weights (9 taps, per-step gain ~3).  From step 0 the value map grows
geometrically with the number of VI iterations (K = 12-16, logits ~1e7-1e14 at step 0); the action logits are
that large, the cross-entropy is huge, the backward pass through the K iterations is larger still
and the first SGD steps throw the weights to inf -> NaN loss.

ORIGIN: "vi_v", the recurrent value-feedback convolution whose per-iteration gain compounds.

Fix: fan-in scaled initialisation of the VI kernels (the Conv2d default Kaiming-uniform, std ~
1/sqrt(3*9), i.e. per-step gain below one) instead of unit-variance randn; model, data, K and the
SGD optimiser unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "vi_v"
SOURCE = ("Value Iteration Networks (Tamar et al., NeurIPS 2016) reference code initialises the "
          "VI kernels with randn*0.01; ports that drop the scale blow up with K (recurrent weight "
          "gain compounding, cf. 'exploding activations with recurrent weights of large norm')")

MOVES = [(-1, 0), (1, 0), (0, -1), (0, 1)]


class VIN(nn.Module):
    def __init__(self, l_h, l_q, k_iters, scale):
        super().__init__()
        self.k = k_iters
        self.h = nn.Conv2d(2, l_h, 3, padding=1)
        self.r = nn.Conv2d(l_h, 1, 1, bias=False)
        self.vi_r = nn.Conv2d(1, l_q, 3, padding=1, bias=False)
        self.vi_v = nn.Conv2d(1, l_q, 3, padding=1, bias=False)
        if scale is not None:
            with torch.no_grad():
                self.vi_r.weight.copy_(torch.randn_like(self.vi_r.weight) * scale)
                self.vi_v.weight.copy_(torch.randn_like(self.vi_v.weight) * scale)
        self.fc = nn.Linear(l_q, 4, bias=False)

    def forward(self, maps, pos):
        r = self.r(self.h(maps))
        q = self.vi_r(r)
        v, _ = q.max(dim=1, keepdim=True)
        for _ in range(self.k):
            q = self.vi_r(r) + self.vi_v(v)
            v, _ = q.max(dim=1, keepdim=True)
        q = self.vi_r(r) + self.vi_v(v)
        b = torch.arange(maps.shape[0])
        q_at = q[b, :, pos[:, 0], pos[:, 1]]
        return self.fc(q_at)


def _grid(n, g):
    while True:
        walls = (torch.rand(n, n, generator=g) < 0.2)
        free = (~walls).nonzero()
        if len(free) < 6:
            continue
        i = torch.randperm(len(free), generator=g)[:2]
        goal, start = free[i[0]].tolist(), free[i[1]].tolist()
        # BFS distances from goal
        dist = [[-1] * n for _ in range(n)]
        dist[goal[0]][goal[1]] = 0
        frontier = [tuple(goal)]
        while frontier:
            nxt = []
            for (a, b) in frontier:
                for da, db in MOVES:
                    x, y = a + da, b + db
                    if 0 <= x < n and 0 <= y < n and not walls[x, y] and dist[x][y] < 0:
                        dist[x][y] = dist[a][b] + 1
                        nxt.append((x, y))
            frontier = nxt
        if dist[start[0]][start[1]] <= 0:
            continue
        best = None
        for k, (da, db) in enumerate(MOVES):
            x, y = start[0] + da, start[1] + db
            if 0 <= x < n and 0 <= y < n and dist[x][y] == dist[start[0]][start[1]] - 1:
                best = k
                break
        maps = torch.zeros(2, n, n)
        maps[0] = walls.float()
        maps[1, goal[0], goal[1]] = 10.0
        return maps, torch.tensor(start), best


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n = 8
    k_iters = [12, 16, 14][seed % 3]
    l_q = [8, 10, 12][seed % 3]
    batch = [24, 20, 16][seed % 3]
    lr = [0.012, 0.008, 0.01][seed % 3]
    steps = 250

    torch.manual_seed(seed)
    model = VIN(l_h=16, l_q=l_q, k_iters=k_iters, scale=None if fixed else 1.0)

    batches = []
    for _ in range(steps):
        m, p, a = zip(*[_grid(n, g) for _ in range(batch)])
        batches.append(((torch.stack(m), torch.stack(p)), torch.tensor(a)))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": lambda out, y: F.cross_entropy(out, y),
            "batches": batches, "steps": steps}
