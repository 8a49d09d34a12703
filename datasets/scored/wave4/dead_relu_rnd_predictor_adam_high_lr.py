"""Random Network Distillation (Burda et al. 2018) exploration bonus: a trainable predictor MLP
regresses the output of a fixed, randomly initialised target network on observations, and its error is
the intrinsic reward. The predictor's hidden layers use ReLU and are trained with Adam at a learning
rate whose exponent got lost in a config edit (1.5 instead of 1.5e-3). Because the observations are
all non-negative (pixel-like), every first-layer weight of a unit moves in the same direction on each
Adam step; within the first few steps the first-layer pre-activations are pushed below zero for every
input, the whole first ReLU layer is dead (100% zero outputs), the predictor emits a constant and the
loss never gets below the target variance (flat, or climbing while the output bias oscillates): finite,
no NaN. Fix: the intended small learning rate."""
import torch, torch.nn as nn
CAUSE = "dead_relu"
ORIGIN = "predictor.0"
SOURCE = "RND (Burda et al. 2018); common 'RND intrinsic reward goes flat / predictor dead' reports with ReLU predictors"
def mlp(d, h, o, act):
    return nn.Sequential(nn.Linear(d, h), act(), nn.Linear(h, h), act(), nn.Linear(h, o))
class RND(nn.Module):
    def __init__(s, d, h, o, act):
        super().__init__(); s.target = mlp(d, h, o, nn.ReLU); s.predictor = mlp(d, h, o, act)
        for p in s.target.parameters(): p.requires_grad_(False)
    def forward(s, obs): return {"pred": s.predictor(obs), "tgt": s.target(obs)}
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    d, h, o = 24, [16, 24, 32][seed], 8
    steps, bs = 150, 64
    act = nn.ReLU
    model = RND(d, h, o, act)
    with torch.no_grad():
        for p in model.target.parameters(): p.mul_(3.0)
    batches = []
    for _ in range(steps):
        obs = torch.rand(bs, d, generator=g) * (torch.rand(bs, 1, generator=g) + 0.5)
        batches.append((obs, None))
    opt = torch.optim.Adam(model.predictor.parameters(), lr=1e-3 if fixed else [1.5, 2.0, 3.0][seed])  # '1.5e-3' etc. with the exponent dropped
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: ((o["pred"] - o["tgt"]) ** 2).mean(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
