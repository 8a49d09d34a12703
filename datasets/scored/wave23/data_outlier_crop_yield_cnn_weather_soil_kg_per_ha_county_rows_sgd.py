"""County crop-yield CNN (weekly weather Conv1d + soil MLP) hit by one batch reported in kg/ha.

Mechanism: the model follows the CNN-RNN/CNN yield predictors (Khaki et al.): a Conv1d stack
over 30 weeks of weather (GDD, rain, max/min temperature, solar radiation, VPD) and an MLP over
soil covariates, fused and regressed onto county yield in t/ha (mean ~9, sd ~1.5) with MSE
and plain SGD. Every record is in t/ha except those of one state whose survey export arrived
in kg/ha (x1000). Those rows land in one batch (its position changes with the seed); their
squared error is ~1e8 and the gradient step it produces is thousands of times the normal one.
The head and fusion weights overshoot, the next (clean) batch produces an even larger error in
the opposite direction, and the run diverges to inf/NaN within a few steps of the bad batch,
after a calm first part of training.

ORIGIN = None: the corruption is in the targets, so no module starts the failure; the huge
error enters through the loss and reaches every layer in the same backward pass.

Fix: drop physically impossible yields (> 25 t/ha) from the batch before the step (a data
sanity filter); same model, optimiser, other batches and steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("USDA NASS county yield exports mixing bu/ac, t/ha and kg/ha units; Khaki et al. 2020 "
          "'A CNN-RNN framework for crop yield prediction'; 'one bad batch killed my network / "
          "loss stuck after a spike' reports on PyTorch forums")


class YieldCNN(nn.Module):
    def __init__(self, ch, hid, n_soil):
        super().__init__()
        self.weather = nn.Sequential(
            nn.Conv1d(6, ch, 5, padding=2), nn.ReLU(),
            nn.Conv1d(ch, ch, 5, padding=2, stride=2), nn.ReLU(),
            nn.Conv1d(ch, ch, 3, padding=1, stride=2), nn.ReLU(),
        )
        self.soil = nn.Sequential(nn.Linear(n_soil, hid), nn.ReLU())
        self.fuse = nn.Sequential(nn.Linear(ch + hid, hid), nn.ReLU(), nn.Linear(hid, 1))

    def forward(self, w, s):
        hw = self.weather(w).mean(-1)
        hs = self.soil(s)
        return self.fuse(torch.cat([hw, hs], 1)).squeeze(-1)


def _data(g, n, n_soil):
    t = torch.arange(30).float()
    season = torch.sin(t / 30 * 3.1416)
    w = 0.7 * torch.randn(n, 6, 30, generator=g) + season
    s = torch.randn(n, n_soil, generator=g)
    heat = torch.relu(w[:, 2, 10:20] - 1.2).sum(1)        # heat stress around flowering
    rain = w[:, 1, 8:22].mean(1)
    yld = 9.0 + 0.9 * rain - 0.35 * heat + 0.5 * s[:, 0] - 0.3 * s[:, 1] * s[:, 2] + 0.4 * torch.tanh(s[:, 3])
    yld = yld + 0.2 * torch.randn(n, generator=g)
    return w, s, yld


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(3000 + seed)
    ch = [16, 24, 20][seed % 3]
    hid = [32, 48, 64][seed % 3]
    lr = [0.01, 0.008, 0.012][seed % 3]
    bs = [32, 48, 40][seed % 3]
    steps = 160
    bad_step = [70, 95, 120][seed % 3]
    n_soil = 8
    torch.manual_seed(seed)
    model = YieldCNN(ch, hid, n_soil)
    w, s, y = _data(g, bs * steps, n_soil)
    batches = []
    for i in range(steps):
        sl = slice(i * bs, (i + 1) * bs)
        wb, sb, yb = w[sl].clone(), s[sl].clone(), y[sl].clone()
        if i == bad_step:
            k = bs // 4
            yb[:k] = yb[:k] * 1000.0           # one state's rows in kg/ha
        if fixed:
            keep = yb < 25.0
            wb, sb, yb = wb[keep], sb[keep], yb[keep]
        batches.append(((wb, sb), yb))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
