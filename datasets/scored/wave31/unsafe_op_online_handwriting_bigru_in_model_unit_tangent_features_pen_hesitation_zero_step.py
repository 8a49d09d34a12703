"""Online handwriting (pen-trajectory) character recognition: the model receives raw digitiser
samples (x, y, pen-up flag) and computes its own stroke features in a `StrokeFeatures` module -
the unit tangent (cos, sin of the writing direction, d / |d| of consecutive samples), the turning
signal (dot product of consecutive unit tangents, i.e. the cosine of the curvature angle) and the
log step length - followed by a bidirectional GRU, mean pooling over time and a linear classifier.
Cross-entropy, Nesterov SGD.

Mechanism: the unit tangent is computed as d / d.norm(dim=-1, keepdim=True) with no epsilon. A
pen that stays still for one sampling period (a hesitation, a cusp, the digitiser repeating a
sample) produces d = (0, 0) and 0/0 = NaN in the forward pass; log(|d|) is -inf on the same
sample. Batches are per-writer sessions; most writers move the pen continuously and training is
calm; the first session of a slow, hesitant writer (its step depends on the seed) contains such
samples, turns the loss NaN and the run is lost.

ORIGIN: "features", the in-model stroke-feature module whose normalisation divides by zero.

Fix: d / d.norm().clamp_min(1e-6) and log(|d| + 1e-6) (an epsilon on the unsafe ops); the model,
data, optimiser and steps are unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "features"
SOURCE = ("Online handwriting recognisers compute direction/curvature features from pen samples "
          "(Graves et al. 2009 IAM-OnDB features; Carbune et al. 2020 Google online HWR); "
          "x / x.norm() without eps gives NaN for zero-length steps (PyTorch F.normalize uses eps "
          "for exactly this reason)")


class StrokeFeatures(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, pts):  # pts: (B, T, 3) = x, y, pen_up
        d = pts[:, 1:, :2] - pts[:, :-1, :2]
        n = d.norm(dim=-1, keepdim=True)
        u = d / (n.clamp_min(self.eps) if self.eps else n)           # unit tangent
        turn = (u[:, 1:] * u[:, :-1]).sum(-1, keepdim=True)          # cos of turning angle
        turn = torch.cat([turn[:, :1], turn], 1)
        logstep = torch.log(n + self.eps)
        return torch.cat([u, turn, logstep, pts[:, 1:, 2:]], -1)     # (B, T-1, 5)


class OnlineHWR(nn.Module):
    def __init__(self, hidden, n_cls, eps):
        super().__init__()
        self.features = StrokeFeatures(eps)
        self.rnn = nn.GRU(5, hidden, batch_first=True, bidirectional=True)
        self.cls = nn.Linear(2 * hidden, n_cls)

    def forward(self, pts):
        h, _ = self.rnn(self.features(pts))
        return self.cls(h.mean(1))


def _templates(g, n_cls, n_ctrl):
    # each character: a smooth pen path through random control points, one pen lift midway
    return torch.rand(n_cls, n_ctrl, 2, generator=g) * torch.tensor([1.0, 1.6])


def _sample(g, tpl, t_len, p_hes):
    n_ctrl = tpl.shape[0]
    ctrl = tpl + 0.06 * torch.randn(tpl.shape, generator=g)
    s = torch.linspace(0, n_ctrl - 1, t_len)
    i0 = s.floor().long().clamp(max=n_ctrl - 2)
    f = (s - i0).unsqueeze(1)
    f = f * f * (3 - 2 * f)                                         # ease-in/out pen speed
    xy = ctrl[i0] * (1 - f) + ctrl[i0 + 1] * f
    xy = xy + 0.004 * torch.randn(t_len, 2, generator=g)
    # rotate/scale per writer
    a = 0.15 * float(torch.randn(1, generator=g))
    rot = torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    xy = (xy @ rot.T) * (0.8 + 0.4 * float(torch.rand(1, generator=g)))
    # pen hesitations: the digitiser reports the same position twice
    hes = torch.rand(t_len, generator=g) < p_hes
    hes[0] = False
    for t in torch.nonzero(hes).flatten().tolist():
        xy[t] = xy[t - 1]
    pen = torch.zeros(t_len, 1)
    pen[t_len // 2] = 1.0
    return torch.cat([xy, pen], 1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_cls = [10, 12, 16][seed % 3]
    hidden = [48, 64, 32][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = [0.05, 0.08, 0.05][seed % 3]
    first_slow_writer = [40, 65, 90][seed % 3]   # batches are per-writer sessions
    t_len = 40
    steps = 150
    tpl = _templates(g, 10 + 6, 6)[:n_cls]
    xs, ys = [], []
    for s in range(steps):
        # most writers move the pen continuously; slow, hesitant writers (a few sessions) pause
        slow = s >= first_slow_writer and (s - first_slow_writer) % 23 == 0
        y = torch.randint(0, n_cls, (bs,), generator=g)
        xs.append(torch.stack([_sample(g, tpl[int(c)], t_len, 0.03 if slow else 0.0) for c in y]))
        ys.append(y)
    torch.manual_seed(seed)
    model = OnlineHWR(hidden, n_cls, eps=1e-6 if fixed else 0.0)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    batches = list(zip(xs, ys))
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps}
