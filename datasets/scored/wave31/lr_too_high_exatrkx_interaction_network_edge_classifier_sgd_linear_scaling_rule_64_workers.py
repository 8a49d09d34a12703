"""Track finding as edge classification on hit graphs (HEP.TrkX / Exa.TrkX style): a hand-written
Interaction Network (edge MLP -> scatter-add aggregation -> node MLP, iterated) scores every
candidate segment between hits on adjacent barrel layers (with its curvature / z0 features) as
true/fake; SGD + momentum with BCE-with-logits.

Mechanism: the learning rate comes from a distributed recipe: a base lr (0.08-0.12) for one event
per step, scaled with the linear scaling rule to 64 data-parallel workers (lr = base * 64, about
5-8).  This run trains on one worker with one event per step but kept the scaled lr (and has no
warmup).  The message-passing iterations reuse the edge and node MLPs several times per forward
pass, so each oversized update is compounded; from the first steps the update-to-weight ratios are
~1e-1 .. 1, the tanh layers are thrown between saturation levels and the classifier's logits grow
to tens and hundreds with alternating sign.  The loss jumps from ~0.69 to 10-500 and thrashes
there for the rest of the run (finite: the tanh hidden layers bound everything but the last
Linear), while the run at the base lr separates true segments almost perfectly.

ORIGIN: None: an optimiser setting, not a module, is the cause; every layer is overshot at once.

Fix: the unscaled base lr (the lr for the batch actually used); same model, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Goyal et al. 2017 linear scaling rule applied without the matching batch size / warmup; "
          "Interaction-Network track finding (Farrell et al. 2018 HEP.TrkX, Ju et al. 2021 "
          "Exa.TrkX) on hit graphs")

LAYER_R = [3.2, 7.2, 11.6, 17.2, 25.6, 36.0, 50.0, 66.0, 82.0, 102.0]   # cm, barrel layers


def _event(g, n_tracks, n_noise):
    hits, pid = [], []
    for t in range(n_tracks):
        pt = 1.0 + 9.0 * torch.rand(1, generator=g).item()                  # GeV
        q = 1 if torch.rand(1, generator=g).item() < 0.5 else -1
        phi0 = (torch.rand(1, generator=g).item() * 2 - 1) * math.pi
        eta = (torch.rand(1, generator=g).item() * 2 - 1) * 1.5
        R = pt / (0.3 * 2.0) * 100                                          # radius cm, B=2T
        for r in LAYER_R:
            phi = phi0 - q * math.asin(min(1.0, r / (2 * R))) + 0.002 * torch.randn(1, generator=g).item()
            z = r * math.sinh(eta) + 0.05 * torch.randn(1, generator=g).item()
            hits.append((r, phi, z, LAYER_R.index(r)))
            pid.append(t)
    for _ in range(n_noise):
        li = int(torch.randint(0, len(LAYER_R), (1,), generator=g))
        r = LAYER_R[li]
        hits.append((r, (torch.rand(1, generator=g).item() * 2 - 1) * math.pi,
                     (torch.rand(1, generator=g).item() * 2 - 1) * 200, li))
        pid.append(-1 - len(pid))
    h = torch.tensor(hits)
    pid = torch.tensor(pid)
    layer = h[:, 3].long()
    # candidate segments: hits on adjacent layers within a phi / z-slope window
    src, dst = [], []
    for li in range(len(LAYER_R) - 1):
        a = torch.nonzero(layer == li).flatten()
        b = torch.nonzero(layer == li + 1).flatten()
        dphi = (h[b, 1][None] - h[a, 1][:, None] + math.pi) % (2 * math.pi) - math.pi
        dr = h[b, 0][None] - h[a, 0][:, None]
        z0 = h[a, 2][:, None] - h[a, 0][:, None] * (h[b, 2][None] - h[a, 2][:, None]) / dr
        ok = (dphi.abs() / dr < 0.02) & (z0.abs() < 80)
        ia, ib = torch.nonzero(ok, as_tuple=True)
        src.append(a[ia]); dst.append(b[ib])
    src, dst = torch.cat(src), torch.cat(dst)
    y = (pid[src] == pid[dst]).float()
    feats = torch.stack([h[:, 0] / 100.0, h[:, 1] / math.pi, h[:, 2] / 200.0], 1)
    # segment features: delta phi / delta r (curvature proxy) and z at the beam line
    dphi = (h[dst, 1] - h[src, 1] + math.pi) % (2 * math.pi) - math.pi
    dr = h[dst, 0] - h[src, 0]
    z0 = h[src, 2] - h[src, 0] * (h[dst, 2] - h[src, 2]) / dr
    efeat = torch.stack([dphi / dr / 0.005, z0 / 10.0], 1)
    return (feats, torch.stack([src, dst]), efeat), y


def _mlp(d_in, d_h, d_out, act=nn.Tanh):
    return nn.Sequential(nn.Linear(d_in, d_h), act(), nn.Linear(d_h, d_h), act(),
                         nn.Linear(d_h, d_out))


class InteractionNetwork(nn.Module):
    def __init__(self, hidden, n_iter):
        super().__init__()
        self.n_iter = n_iter
        self.node_enc = _mlp(3, hidden, hidden)
        self.edge_enc = _mlp(8, hidden, hidden)
        self.edge_net = _mlp(3 * hidden, hidden, hidden)
        self.node_net = _mlp(2 * hidden, hidden, hidden)
        self.classifier = _mlp(3 * hidden, hidden, 1)

    def forward(self, x, edge_index, edge_attr):
        src, dst = edge_index
        h = self.node_enc(x)
        e = self.edge_enc(torch.cat([x[src], x[dst], edge_attr], 1))
        for _ in range(self.n_iter):
            e = e + self.edge_net(torch.cat([h[src], h[dst], e], 1))
            agg = torch.zeros_like(h).index_add_(0, dst, e).index_add_(0, src, e)
            h = h + self.node_net(torch.cat([h, agg], 1))
        return self.classifier(torch.cat([h[src], h[dst], e], 1)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    n_iter = [3, 4, 2][seed % 3]
    n_tracks = [20, 30, 25][seed % 3]
    base_lr = [0.1, 0.08, 0.12][seed % 3]
    workers = 64
    lr = base_lr if fixed else base_lr * workers
    steps = 150

    events = [_event(g, n_tracks + int(torch.randint(0, 10, (1,), generator=g)), 150)
              for _ in range(steps)]

    torch.manual_seed(seed)
    model = InteractionNetwork(hidden, n_iter)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    batches = [(inputs, y) for inputs, y in events]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
