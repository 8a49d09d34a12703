"""Esports (MOBA) live win-probability model: an MLP over a mid-game snapshot (gold,
XP and CS differences, towers, dragons, heralds, kills, vision score, game clock; all
standardised with the training-set scaler) predicts whether blue side wins; BCE with
logits, SGD with Nesterov momentum.

Mechanism: the snapshots come from a replay parser.  One batch (a seed-dependent step)
holds matches parsed by a parser version that emits the game clock in milliseconds, so
after the (seconds-based) scaler that column is ~1e3 instead of ~N(0, 1).  On that
batch the first layer's pre-activations are ~1e3x too large, the logits are huge and
confidently wrong for half the rows, and the gradient on the first layer's clock
column (grad ~ x) is ~1e3x normal: one update writes clock weights of order 1e1-1e2
into every hidden unit (and the momentum buffer repeats it).  From then on every
normal snapshot is dominated by the clock feature: the hidden ReLUs are pinned off (or
on) by the clock alone, the network loses the game-state signal and falls back to a
constant ~50% prediction -- the BCE sits at ln 2 for the rest of the run (for some
seeds the blown-up weights overflow to NaN instead).

ORIGIN: ``mlp.0`` -- the first Linear is the first layer the corrupt column hits and
where the damaging update is written.

Fix: reject/repair the batch at ingestion -- the clock column is range-checked
(a snapshot cannot be at > 2 hours) and converted back to seconds before scaling.
Same model, optimiser, steps.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "mlp.0"
SOURCE = ("Replay/stat parser version drift in esports data (e.g. OpenDota / Riot match "
          "timeline APIs reporting timestamps in ms while older dumps use seconds); the "
          "'one batch with a wildly out-of-range feature ruined training' pattern.")

N_FEAT = 10
CLOCK = 9
CLOCK_MEAN, CLOCK_STD = 900.0, 240.0  # scaler fitted on seconds


class WinProbMLP(nn.Module):
    def __init__(self, hidden, depth):
        super().__init__()
        layers, d = [], N_FEAT
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x)


def _snapshots(g, n, w, clock_in_ms=False):
    z = torch.randn(n, N_FEAT - 1, generator=g)
    clock_s = (CLOCK_MEAN + CLOCK_STD * torch.randn(n, 1, generator=g)).clamp(300, 2400)
    # later snapshots: the lead is more decisive
    logit = (z @ w) * (clock_s.squeeze(1) / CLOCK_MEAN) + 0.4 * z[:, 0] * z[:, 1]
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float().unsqueeze(1)
    raw_clock = clock_s * 1000.0 if clock_in_ms else clock_s
    x = torch.cat([z, (raw_clock - CLOCK_MEAN) / CLOCK_STD], 1)
    return x, y, raw_clock


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    hidden = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 160
    bad_step = [60, 84, 45][seed % 3]
    w = torch.randn(N_FEAT - 1, generator=g) * 0.9

    model = WinProbMLP(hidden, depth)

    batches = []
    for s in range(steps):
        x, y, raw_clock = _snapshots(g, bs, w, clock_in_ms=(s == bad_step))
        if fixed and raw_clock.max() > 7200.0:  # clock range check at ingestion
            x = torch.cat([x[:, :CLOCK], (raw_clock / 1000.0 - CLOCK_MEAN) / CLOCK_STD], 1)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
