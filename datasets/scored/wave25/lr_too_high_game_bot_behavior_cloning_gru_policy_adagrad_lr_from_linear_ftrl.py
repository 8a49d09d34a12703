"""Game AI: a behaviour-cloning policy for a 2D action game bot.  A GRU reads the last
12-20 frames of a compact game-state vector (player/enemy positions and velocities,
health, cooldowns, projectile distances; standardised) and predicts the human player's
next action (one of 10 discrete inputs); cross-entropy, Adagrad.

Mechanism: the optimiser config was inherited from the studio's older linear/FTRL-style
models, where Adagrad with lr = 0.8-1.2 is normal.  Adagrad's first step is
lr * g / |g| = lr for *every* parameter (the accumulator starts at g^2), so each GRU and
head weight jumps by ~0.8-1.2 at step 0 -- orders of magnitude more than the weights
themselves (~0.1-0.2).  The gates saturate, the logits become large and confidently
wrong, and the loss jumps far above its starting value.  Adagrad's accumulators are now
huge and only grow, so later steps are far too small to undo the damage: the run ends
with the loss at or above its initial level.  No NaN.

ORIGIN: None -- the learning rate, not a module, is the cause; every layer takes the
same oversized first step.

Fix: Adagrad lr 0.05 (the usual order for neural nets); same model, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Behaviour cloning for game bots from human play logs (e.g. MineRL / 'Counter-Strike "
          "deathmatch behavioural cloning', Pearce & Zhu 2021); Adagrad lr carried over from "
          "FTRL/linear CTR configs (lr ~1) into a neural model.")

D_OBS = 16
N_ACT = 10


class BCPolicy(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.enc = nn.Linear(D_OBS, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.pi = nn.Linear(hidden, N_ACT)

    def forward(self, obs):
        h, _ = self.gru(torch.relu(self.enc(obs)))
        return self.pi(h[:, -1])


def _clips(g, n, T, W, V):
    obs = torch.randn(n, T, D_OBS, generator=g)
    obs[:, :, :4] = torch.cumsum(0.3 * obs[:, :, :4], 1) / T ** 0.5  # positions drift
    ctx = obs[:, -3:].mean(1)
    score = ctx @ W + torch.tanh(obs[:, -1] @ V) * 1.5
    act = torch.distributions.Categorical(logits=2.0 * score).sample()
    return obs, act


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    hidden = [64, 48, 96][seed % 3]
    lr = [1.0, 1.2, 0.8][seed % 3]
    if fixed:
        lr = 0.05
    bs = [64, 96, 48][seed % 3]
    T = [16, 12, 20][seed % 3]
    steps = 150
    W = torch.randn(D_OBS, N_ACT, generator=g) / D_OBS ** 0.5
    V = torch.randn(D_OBS, N_ACT, generator=g) / D_OBS ** 0.5
    torch.manual_seed(seed)  # deterministic action sampling
    model = BCPolicy(hidden)
    batches = [_clips(g, bs, T, W, V) for _ in range(steps)]
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
