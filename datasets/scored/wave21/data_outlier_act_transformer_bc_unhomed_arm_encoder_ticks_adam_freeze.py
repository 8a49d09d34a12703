"""ACT-style behaviour-cloning policy (transformer encoder over a short history of
joint-state tokens -> chunk of future joint targets) for a 7-DoF arm, trained with Adam on
teleoperation demos stored in radians.

Mechanism: one demo episode was recorded before the arm was homed, and its joint states
and actions were dumped as raw encoder ticks (rad * 4096/(2*pi) * gear 100 ~ 6.5e4 per rad).
When that batch arrives early in training the loss and the gradients are ~1e9 times
larger than usual; Adam's second-moment estimate v absorbs g^2 of that batch and then
decays only with beta2 = 0.999, so for the rest of the run every normal update is
scaled by ~1e-4.5 of its size: the policy freezes at its initial loss (a stall), after a
brief drift along the outlier's gradient.
ORIGIN: None - the fault is one corrupt batch.
Fix: the corrupt episode is dropped (replaced by a clean batch).
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "ACT / ALOHA imitation-learning forum reports: one episode logged in raw encoder ticks before homing froze training (Adam second moment blown up)"


class ACTPolicy(nn.Module):
    def __init__(self, d, layers, chunk, dof=7):
        super().__init__()
        self.inp = nn.Linear(dof, d)
        self.pos = nn.Parameter(torch.zeros(1, 8, d))
        enc = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc, layers)
        self.head = nn.Linear(d, chunk * dof)
        self.chunk, self.dof = chunk, dof

    def forward(self, q):
        h = self.encoder(self.inp(q) + self.pos[:, : q.shape[1]])
        return self.head(h[:, -1]).view(-1, self.chunk, self.dof)


def _batch(g, B, chunk, ticks=False):
    w = 0.5 + torch.rand(B, 1, 7, generator=g)
    ph = torch.rand(B, 1, 7, generator=g) * 6.28
    amp = torch.rand(B, 1, 7, generator=g) + 0.3
    t = torch.arange(8 + chunk, dtype=torch.float32)[None, :, None] * 0.15
    traj = amp * torch.sin(w * t + ph)
    q, a = traj[:, :8], traj[:, 8:]
    if ticks:
        s = 4096 / (2 * math.pi) * 100
        q, a = q * s, a * s
    return q, a


def build(seed: int, fixed: bool = False) -> dict:
    d, layers, lr, B, bad = [(32, 2, 5e-4, 16, 0), (48, 1, 5e-4, 12, 1), (32, 2, 5e-4, 24, 1)][seed % 3]
    torch.manual_seed(seed)
    chunk = 4
    model = ACTPolicy(d, layers, chunk)
    g = torch.Generator().manual_seed(4000 + seed)
    steps = 80
    batches = [_batch(g, B, chunk, ticks=(i == bad and not fixed)) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
