"""Pedestrian trajectory forecasting in the ETH/UCY protocol (8 observed steps, 12 predicted, 0.4 s
frames): a GRU encoder reads the observed relative displacements, a GRU decoder rolls out 12 future
displacements autoregressively, and the loss is the mean squared displacement error of the
cumulative positions (ADE^2-style). The optimiser is RMSprop with lr 0.1, the upper end of an LR
range test that was pasted in as the training lr. RMSprop has no bias correction, so its first
steps are ~lr/sqrt(1-alpha) = 10x lr per weight, and each later step still moves every recurrent
weight by ~lr: the GRU gates swing back and forth, the autoregressive rollout amplifies every swing
over 12 steps, and the loss bounces around (and above) its starting level with occasional large
spikes - finite, never NaN, never learning. Fixed:
RMSprop lr 1e-3."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("ETH/UCY trajectory forecasting with a GRU seq2seq (Social-LSTM/S-GAN vanilla baseline); "
          "too-high RMSprop lr -> oscillating, non-decreasing loss")

T_OBS, T_PRED = 8, 12


class Seq2SeqTraj(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.inp = nn.Linear(2, 32)
        self.encoder = nn.GRU(32, hidden, batch_first=True)
        self.decoder = nn.GRUCell(32, hidden)
        self.out = nn.Linear(hidden, 2)

    def forward(self, obs_rel):
        _, h = self.encoder(torch.relu(self.inp(obs_rel)))
        h = h[0]
        d = obs_rel[:, -1]
        preds = []
        for _ in range(T_PRED):
            h = self.decoder(torch.relu(self.inp(d)), h)
            d = self.out(h)
            preds.append(d)
        return torch.stack(preds, 1)


def synth_pedestrians(g, B):
    speed = 0.3 + 0.4 * torch.rand(B, generator=g)          # metres per 0.4 s frame (~1.3 m/s)
    heading = torch.rand(B, generator=g) * 2 * math.pi
    turn = torch.randn(B, generator=g) * 0.06
    t = torch.arange(T_OBS + T_PRED).float()
    ang = heading[:, None] + turn[:, None] * t
    acc = 1 + 0.02 * torch.randn(B, 1, generator=g) * t
    d = torch.stack([torch.cos(ang), torch.sin(ang)], -1) * (speed[:, None] * acc)[..., None]
    d = d + 0.02 * torch.randn(d.shape, generator=g)
    return d[:, :T_OBS], d[:, T_OBS:]


def loss_fn(pred_rel, fut_rel):
    return ((pred_rel.cumsum(1) - fut_rel.cumsum(1)) ** 2).sum(-1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Seq2SeqTraj()
    steps = 150
    batches = [synth_pedestrians(g, 64) for _ in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3 if fixed else 0.1)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
