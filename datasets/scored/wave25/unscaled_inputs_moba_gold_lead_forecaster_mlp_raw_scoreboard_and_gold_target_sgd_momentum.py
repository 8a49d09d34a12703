"""Esports analytics: an MLP forecasts a MOBA match's blue-side gold lead at 25 minutes
(the quantity broadcasters' win-probability graphics are built on) from the 15-minute
scoreboard of both teams (total gold, total XP, creep score, kills, towers, dragons,
wards -- per team) plus the draft as a multi-hot over 60 champions; MSE, SGD with
momentum.

Mechanism: the scoreboard columns go into the network as exported by the match API,
raw (team gold ~2.0e4-3.0e4, XP ~1.7e4-2.6e4, CS ~300-450; draft bits 0/1), and the
target is the raw gold lead (std ~3e3).  The first Linear's pre-activations are
~1e3-1e4 from step 0 and the MSE starts at ~1e7-1e8.  The gradient w.r.t. the
first-layer weights scales with the raw inputs times the raw error, so the loss
curvature is ~1e8-1e9x that of the standardised problem: the first momentum-SGD steps
overshoot by orders of magnitude and the loss goes to inf/NaN within a few steps.

ORIGIN: ``mlp.0`` -- the first Linear, which receives the unscaled columns and where
the huge pre-activations start.

Fix: standardise the scoreboard columns and the gold-lead target (mean/std from the
training data; the draft bits stay 0/1); same model, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "mlp.0"
SOURCE = ("Match-timeline data from Riot/OpenDota APIs (e.g. the Kaggle 'League of Legends "
          "Diamond ranked games' dataset with raw team gold/XP columns); the generic "
          "'forgot StandardScaler on inputs and targets, loss is huge then NaN' pattern.")

N_CHAMPS = 60
STAT_MEAN = torch.tensor([25000., 21000., 380., 6., 1., 1., 40.])
STAT_STD = torch.tensor([2500., 1800., 35., 3., 1., 0.8, 10.])


class GoldLeadMLP(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.mlp(x)


def _matches(g, n, champ_w):
    blue = STAT_MEAN + STAT_STD * torch.randn(n, 7, generator=g)
    red = STAT_MEAN + STAT_STD * torch.randn(n, 7, generator=g)
    draft = torch.zeros(n, 2 * N_CHAMPS)
    for i in range(n):
        picks = torch.randperm(N_CHAMPS, generator=g)[:10]
        draft[i, picks[:5]] = 1.0
        draft[i, N_CHAMPS + picks[5:]] = 1.0
    lead15 = blue[:, 0] - red[:, 0]
    snowball = 1.4 * lead15 + 300.0 * torch.tanh(lead15 / 2000.0) * (blue[:, 4] - red[:, 4])
    comp = 400.0 * (draft[:, :N_CHAMPS] @ champ_w - draft[:, N_CHAMPS:] @ champ_w)
    lead25 = snowball + comp + 800.0 * torch.randn(n, generator=g)
    return torch.cat([blue, red], 1), draft, lead25.unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(15 + seed)
    hidden = [64, 128, 96][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 150
    champ_w = torch.randn(N_CHAMPS, generator=g)
    raw = [_matches(g, bs, champ_w) for _ in range(steps)]
    s_all = torch.cat([s for s, _, _ in raw])
    y_all = torch.cat([y for _, _, y in raw])
    mu, sd, ymu, ysd = s_all.mean(0), s_all.std(0), y_all.mean(), y_all.std()
    batches = []
    for stats, draft, y in raw:
        if fixed:
            stats, y = (stats - mu) / sd, (y - ymu) / ysd
        batches.append((torch.cat([stats, draft], 1), y))
    model = GoldLeadMLP(14 + 2 * N_CHAMPS, hidden)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
