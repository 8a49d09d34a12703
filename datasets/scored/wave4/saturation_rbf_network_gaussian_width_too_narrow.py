"""A classic radial-basis-function network (Gaussian hidden units exp(-||x - c||^2 / (2 s^2)) with
learnable centres and a linear read-out) is written from a textbook for a smooth synthetic
regression in 4-6-D, with the width s copied from a 1-D example. In 4-6-D the distances ||x - c|| are
~3, so with s ~0.1-0.2 every pre-activation -||x - c||^2/(2 s^2) is hundreds of units negative: the
Gaussians are saturated at 0, their gradient w.r.t. centres and the read-out inputs vanish, and
the net can only output its bias; the loss stays at the target variance (silent stall, no NaN).
Fixed: s set from the data (about half the median distance, ~1.5), i.e. pre-activations of order 1."""
import torch, torch.nn as nn
CAUSE = "saturation"
ORIGIN = "rbf"
SOURCE = "Known pattern: RBF networks with too-small kernel width (Bishop, Neural Networks for Pattern Recognition, ch. 5: width heuristic from inter-centre distances)"

class RBF(nn.Module):
    def __init__(self, d, m, s):
        super().__init__()
        self.centres = nn.Parameter(torch.randn(m, d)); self.s = s
    def forward(self, x):
        d2 = ((x[:, None, :] - self.centres[None]) ** 2).sum(-1)
        return torch.exp(-d2 / (2 * self.s ** 2))

class RBFNet(nn.Module):
    def __init__(self, d, m, s):
        super().__init__()
        self.rbf = RBF(d, m, s); self.readout = nn.Linear(m, 1)
    def forward(self, x):
        return self.readout(self.rbf(x)).squeeze(-1)

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = [4, 6, 5][seed % 3]; m = [80, 64, 48][seed % 3]
    s = 1.5 if fixed else [0.15, 0.2, 0.1][seed % 3]
    model = RBFNet(d, m, s)
    w = torch.randn(d, generator=g); w = 0.5 * w / w.norm()
    steps = [160, 150, 120][seed % 3]; bs = [128, 64, 96][seed % 3]
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d, generator=g)
        r = x @ w
        batches.append((x, torch.sin(2 * r) + 0.1 * torch.randn(bs, generator=g)))
    opt = torch.optim.Adam(model.parameters(), lr=[0.03, 0.01, 0.02][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
