"""GAIL (Ho & Ermon 2016) discriminator update on (state, action) pairs: expert demonstrations
vs. rollouts of the current policy, binary cross-entropy on logits, Adam.

Mechanism: expert demonstrations are stored as fixed-length arrays per episode; episodes that
ended early were padded with ``np.nan`` (a common "so I notice if I use them" convention) and
the loader flattens episodes to transitions without dropping the padding.  Almost all sampled
minibatches contain only real transitions, but the minibatch that draws a few rows from the
tail of a short episode carries NaN states/actions.  The discriminator logit of those rows is
NaN, the BCE loss is NaN, Adam writes NaN into every weight, and every later step is NaN.

ORIGIN: None -- the network and loss are fine; the failure enters with one corrupt batch.

Fix: drop the padded (non-finite) rows when building the expert minibatch; everything else,
including all other batches, is identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("GAIL / imitation-learning discriminators (Ho & Ermon 2016, baselines/imitation libs); "
          "issues about NaN discriminator loss traced to NaN-padded expert trajectories "
          "of early-terminated episodes")


class Discriminator(nn.Module):
    def __init__(self, obs_dim, act_dim, width):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(obs_dim + act_dim, width), nn.Tanh(),
            nn.Linear(width, width), nn.Tanh(),
            nn.Linear(width, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], 1)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(obs=11, act=3, width=64, bs=64, lr=1e-3, steps=120, bad=44, n_pad=3),
           dict(obs=17, act=6, width=100, bs=128, lr=2e-3, steps=90, bad=71, n_pad=5),
           dict(obs=8, act=2, width=48, bs=32, lr=1e-3, steps=160, bad=12, n_pad=2)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(123 + seed)
    model = Discriminator(cfg["obs"], cfg["act"], cfg["width"])

    # expert: actions follow a smooth linear-tanh controller; policy: noisier, biased actions
    K = torch.randn(cfg["obs"], cfg["act"], generator=g) / cfg["obs"] ** 0.5
    half = cfg["bs"] // 2
    batches = []
    for i in range(cfg["steps"]):
        s_e = torch.randn(half, cfg["obs"], generator=g)
        a_e = torch.tanh(s_e @ K) + 0.05 * torch.randn(half, cfg["act"], generator=g)
        s_p = torch.randn(half, cfg["obs"], generator=g) * 1.5 + 0.6
        a_p = 0.3 * torch.tanh(s_p @ K) + 0.4 + 0.7 * torch.randn(half, cfg["act"], generator=g)
        if i == cfg["bad"]:
            # rows sampled from the NaN padding at the end of an early-terminated episode
            s_e[-cfg["n_pad"]:] = float("nan")
            a_e[-cfg["n_pad"]:] = float("nan")
            if fixed:
                keep = torch.isfinite(s_e).all(1) & torch.isfinite(a_e).all(1)
                s_e, a_e = s_e[keep], a_e[keep]
        obs = torch.cat([s_e, s_p])
        act = torch.cat([a_e, a_p])
        label = torch.cat([torch.ones(s_e.shape[0]), torch.zeros(half)])
        batches.append(((obs, act), label))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=cfg["steps"])
