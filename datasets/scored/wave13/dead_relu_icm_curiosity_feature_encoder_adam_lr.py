"""ICM intrinsic-curiosity module (Pathak et al. 2017): ReLU feature encoder phi, inverse model
(predict a_t from phi(s_t), phi(s_t+1)) and forward model (predict phi(s_t+1) from phi(s_t), a_t),
loss = (1-beta) * CE_inverse + beta * 0.5 * ||forward error||^2, one Adam optimiser.

Mechanism: the forward loss is back-propagated into phi (both into phi(s_t) and the target
phi(s_t+1)), so phi == 0 is an attractor that makes the forward loss exactly zero.  With the
paper's lr (1e-3) the inverse loss keeps the features informative; the user copied lr=1e-2
from the policy optimiser of a different codebase.  Adam's first steps move every encoder
bias by ~lr in the direction that shrinks the forward error, the feature ReLUs' pre-activations
go negative for every state, and the units die: phi(s) is the zero vector for all inputs, the
forward loss is 0, the inverse model sees identical inputs for every transition and its loss
sits at the entropy of the action marginal, with no gradient left to revive the encoder.

ORIGIN: ``phi.3`` -- the output ReLU of the feature encoder, whose units die first (the inverse
and forward models only see its zeros).

Fix: lr=1e-3 (the ICM paper value); model, loss weights and batches unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "phi.3"
SOURCE = ("ICM curiosity module (Pathak et al. 2017, pytorch ports); issue reports of ICM feature "
          "collapse where phi outputs all zeros, forward loss ~0 and inverse loss stuck at "
          "log(num_actions)")


class ICM(nn.Module):
    def __init__(self, obs_dim, n_actions, width, feat):
        super().__init__()
        self.nA = n_actions
        self.phi = nn.Sequential(nn.Linear(obs_dim, width), nn.ReLU(),
                                 nn.Linear(width, feat), nn.ReLU())
        self.inverse = nn.Sequential(nn.Linear(2 * feat, width), nn.ReLU(),
                                     nn.Linear(width, n_actions))
        self.forward_model = nn.Sequential(nn.Linear(feat + n_actions, width), nn.ReLU(),
                                           nn.Linear(width, feat))

    def forward(self, obs, next_obs, act):
        f_t, f_t1 = self.phi(obs), self.phi(next_obs)
        logits = self.inverse(torch.cat([f_t, f_t1], 1))
        pred = self.forward_model(torch.cat([f_t, F.one_hot(act, self.nA).float()], 1))
        return logits, pred, f_t1


def make_icm_loss(beta):
    def loss_fn(out, act):
        logits, pred, f_t1 = out
        inv = F.cross_entropy(logits, act)
        fwd = 0.5 * ((pred - f_t1) ** 2).sum(1).mean()
        return (1 - beta) * inv + beta * fwd
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(obs=12, nA=4, width=64, feat=32, bs=64, lr=5e-2, steps=120),
           dict(obs=20, nA=6, width=128, feat=48, bs=32, lr=3e-2, steps=100),
           dict(obs=16, nA=5, width=96, feat=32, bs=96, lr=5e-2, steps=150)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(404 + seed)
    model = ICM(cfg["obs"], cfg["nA"], cfg["width"], cfg["feat"])

    # each action moves the agent's (standardised) sensor vector along its own direction
    effect = torch.randn(cfg["nA"], cfg["obs"], generator=g) * 0.8
    batches = []
    for _ in range(cfg["steps"]):
        n = cfg["bs"]
        obs = torch.randn(n, cfg["obs"], generator=g)
        act = torch.randint(0, cfg["nA"], (n,), generator=g)
        next_obs = 0.9 * obs + effect[act] + 0.3 * torch.randn(n, cfg["obs"], generator=g)
        batches.append(((obs, next_obs, act), act))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=make_icm_loss(beta=0.2), batches=batches,
                steps=cfg["steps"])
