"""HEALTHY: GFlowNet (Bengio et al. 2021) on the 2-D hypergrid, trained with the trajectory
balance objective (Malkin et al. 2022) on off-policy trajectories from a uniform-random
explorer:  loss = mean_traj ( log Z + sum_t log P_F(a_t|s_t) - log R(x) - sum_t log P_B )^2.

What looks alarming but is fine:
- log Z is a separate scalar parameter trained with lr 0.1 (100x the policy lr) as in the
  reference implementation; the first steps move it by whole nats and the loss (squared
  log-ratios, initially tens) swings hard before settling;
- invalid actions (moving off the grid) are masked with -inf logits before log_softmax, so the
  logits tensor is full of -inf -- the gathered log-probs of taken actions are finite;
- trajectories have different lengths (padded steps carry a valid "stop" mask and are zeroed
  by the step mask), so per-trajectory residuals differ a lot in scale;
- rewards span two orders of magnitude (R0 = 0.01-0.1 background vs 2.5 modes).

ORIGIN: None (healthy run).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("GFlowNet hypergrid benchmark (Bengio et al. 2021) with trajectory balance "
          "(Malkin et al. 2022, 'Trajectory balance: improved credit assignment in GFlowNets'), "
          "log Z learned with a separate high lr")


class TBGFlowNet(nn.Module):
    def __init__(self, H, width):
        super().__init__()
        self.H = H
        self.policy = nn.Sequential(nn.Linear(2 * H, width), nn.LeakyReLU(),
                                    nn.Linear(width, width), nn.LeakyReLU(),
                                    nn.Linear(width, 3))
        self.log_z = nn.Parameter(torch.zeros(1))

    def forward(self, states, actions, valid, step_mask):
        logits = self.policy(states)                                  # B x T x 3
        logits = logits.masked_fill(~valid, float("-inf"))
        logp = torch.log_softmax(logits, -1).gather(-1, actions[..., None]).squeeze(-1)
        sum_logpf = (logp * step_mask).sum(1)
        return self.log_z + sum_logpf


def tb_loss(out, target):
    return ((out - target) ** 2).mean()


def _reward(pos, H, r0):
    ax = (pos.float() / (H - 1) - 0.5).abs()
    r1 = ((ax > 0.25).all(-1)).float() * 0.5
    r2 = (((ax > 0.3) & (ax < 0.4)).all(-1)).float() * 2.0
    return r0 + r1 + r2


def _sample_batch(g, B, H, r0):
    T = 2 * (H - 1) + 1
    pos = torch.zeros(B, 2, dtype=torch.long)
    alive = torch.ones(B, dtype=torch.bool)
    states = torch.zeros(B, T, 2 * H)
    actions = torch.full((B, T), 2, dtype=torch.long)
    valid = torch.zeros(B, T, 3, dtype=torch.bool)
    valid[..., 2] = True
    step_mask = torch.zeros(B, T)
    sum_logpb = torch.zeros(B)
    for t in range(T):
        can = torch.stack([pos[:, 0] < H - 1, pos[:, 1] < H - 1,
                           torch.ones(B, dtype=torch.bool)], 1)
        st = torch.zeros(B, 2 * H)
        st[torch.arange(B), pos[:, 0]] = 1
        st[torch.arange(B), H + pos[:, 1]] = 1
        # uniform explorer over valid actions
        scores = torch.rand(B, 3, generator=g).masked_fill(~can, -1.0)
        a = scores.argmax(1)
        states[alive, t] = st[alive]
        valid[alive, t] = can[alive]
        actions[alive, t] = a[alive]
        step_mask[alive, t] = 1.0
        move = alive & (a < 2)
        pos[move, a[move]] += 1
        # backward policy: uniform over the parents of the new state (stop has P_B = 1)
        n_par = (pos[:, 0] > 0).long() + (pos[:, 1] > 0).long()
        sum_logpb[move] -= torch.log(n_par[move].float())
        alive = alive & (a < 2)
        if not alive.any():
            break
    log_r = torch.log(_reward(pos, H, r0))
    return (states, actions, valid, step_mask), log_r + sum_logpb


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(H=8, width=64, B=32, lr=1e-3, steps=150, r0=0.1),
           dict(H=10, width=96, B=16, lr=2e-3, steps=120, r0=0.05),
           dict(H=6, width=64, B=64, lr=1e-3, steps=180, r0=0.01)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    model = TBGFlowNet(cfg["H"], cfg["width"])
    batches = [_sample_batch(g, cfg["B"], cfg["H"], cfg["r0"]) for _ in range(cfg["steps"])]
    opt = torch.optim.Adam([
        {"params": model.policy.parameters(), "lr": cfg["lr"]},
        {"params": [model.log_z], "lr": 0.1},
    ])
    return dict(model=model, optimizer=opt, loss_fn=tb_loss, batches=batches,
                steps=cfg["steps"])
