"""MTP (Multiple-Trajectory Prediction, Cui et al. 2019) for driving: small raster CNN + agent
state MLP -> M trajectory modes + mode logits, trained with the MTP loss (winner-takes-all L2
on the best mode + cross-entropy on the mode index) with SGD + momentum.

Mechanism: the dataset is agent-centric (past/future in metres relative to the target agent),
but one shard was exported while the GNSS receiver glitched: for that single batch the
agent-centric transform was skipped and past/future positions are raw UTM (x~5e5 m,
y~4.2e6 m).  That one batch gives a loss ~1e13 and gradients ~1e6-1e9x the normal ones; the
SGD+momentum step throws the state MLP and heads to enormous values, the next forward pass
overflows and the loss is inf/NaN from then on.

ORIGIN: None -- a corrupt batch, not a module, is the cause.
Fix: the glitched batch is replaced by a properly agent-centred one (fixed=True).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("nuScenes/Argoverse MTP baselines; reports of a few samples left in global UTM coordinates "
          "(missing agent-centric transform) blowing up SGD after one huge-gradient batch.")


class MTP(nn.Module):
    def __init__(self, n_modes, horizon, past, width):
        super().__init__()
        self.M, self.T = n_modes, horizon
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.state_fc = nn.Sequential(nn.Linear(past * 2, width), nn.ReLU())
        self.fc = nn.Sequential(nn.Linear(32 + width, width), nn.ReLU())
        self.traj_head = nn.Linear(width, n_modes * horizon * 2)
        self.mode_head = nn.Linear(width, n_modes)

    def forward(self, raster, past):
        h = self.fc(torch.cat([self.backbone(raster), self.state_fc(past.flatten(1))], -1))
        return self.traj_head(h).view(-1, self.M, self.T, 2), self.mode_head(h)


def mtp_loss(out, fut):
    trajs, logits = out
    d = ((trajs - fut[:, None]) ** 2).sum(-1).mean(-1)          # B x M
    best = d.argmin(1)
    reg = d.gather(1, best[:, None]).mean()
    return reg + F.cross_entropy(logits, best)


def make_batch(g, bs, past, T, utm=False):
    speed = 3 + 10 * torch.rand(bs, 1, generator=g)
    turn = (torch.randint(0, 3, (bs, 1), generator=g).float() - 1) * (0.02 + 0.04 * torch.rand(bs, 1, generator=g))
    t_all = torch.arange(-past + 1, T + 1).float()[None] * 0.5
    heading = turn * t_all * speed / 5
    vx, vy = speed * torch.cos(heading), speed * torch.sin(heading)
    x, y = torch.cumsum(vx * 0.5, 1), torch.cumsum(vy * 0.5, 1)
    x, y = x - x[:, past - 1:past], y - y[:, past - 1:past]
    pos = torch.stack([x, y], -1) / 10.0                              # agent-centric, 10 m units
    pos = pos + 0.02 * torch.randn(pos.shape, generator=g)
    raster = torch.zeros(bs, 3, 24, 24)
    raster[:, 0, 10:14, :] = 1.0                                       # lane
    lane_turn = (turn[:, 0] > 0.001).float() - (turn[:, 0] < -0.001).float()
    raster[:, 1] = lane_turn[:, None, None]                            # route channel
    raster[:, 2] = 0.1 * torch.randn(bs, 24, 24, generator=g)
    p, f = pos[:, :past], pos[:, past:]
    if utm:                                                            # glitch: global UTM metres
        off = torch.tensor([512_345.0, 4_182_771.0])
        p, f = p * 10.0 + off, f * 10.0 + off
    return (raster, p), f


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(M=3, T=12, past=6, w=64, lr=0.01, bs=32, steps=100, bad=41),
           dict(M=5, T=10, past=4, w=96, lr=0.005, bs=24, steps=120, bad=66),
           dict(M=4, T=8, past=8, w=48, lr=0.02, bs=48, steps=90, bad=23)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(100 + seed)
    model = MTP(cfg["M"], cfg["T"], cfg["past"], cfg["w"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = [make_batch(g, cfg["bs"], cfg["past"], cfg["T"], utm=(i == cfg["bad"] and not fixed))
               for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=mtp_loss, batches=batches, steps=cfg["steps"])
