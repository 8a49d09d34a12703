"""Social-LSTM pedestrian trajectory predictor: each pedestrian's LSTM hidden state is
combined with a "social tensor" of the neighbours' hidden states, which this
implementation SUM-pools over all neighbours (no grid, no normalisation) and feeds to a
tanh embedding layer before the LSTM input.

Mechanism: in dense crowd scenes (200-300 neighbours, e.g. a station concourse) the summed hidden states are tens of
units in magnitude, so the pre-activations of the social tanh embedding are >> 3 and
almost every unit sits at +-1; its output no longer depends on the neighbours, and its
derivative (1 - tanh^2 ~ 1e-4) blocks the gradient into everything below it.  The
trajectory loss, which here depends on the crowd's mean drift, plateaus.
ORIGIN: the tanh of the social embedding (social_emb.1), the saturating unit.
Fix: normalise the pooled social tensor (LayerNorm before the tanh embedding) - only that
module changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "social_emb.1"
SOURCE = "Social LSTM (Alahi et al. 2016) reimplementations: sum pooling of neighbour hidden states saturating the embedding in crowded scenes (ETH/UCY, crowds_zara)"


class SocialLSTM(nn.Module):
    def __init__(self, d, fixed):
        super().__init__()
        self.pos_emb = nn.Sequential(nn.Linear(2, d), nn.ReLU())
        self.norm = nn.LayerNorm(2 * d) if fixed else nn.Identity()
        self.social_emb = nn.Sequential(nn.Linear(2 * d, d), nn.Tanh())
        self.nbr_enc = nn.Linear(4, 2 * d)
        self.cell = nn.LSTMCell(2 * d, d)
        self.out = nn.Linear(d, 2)
        self.d = d

    def forward(self, own, nbrs):
        # own: (B, T, 2) relative displacements; nbrs: (B, N, 4) neighbour states
        B, T, _ = own.shape
        social = self.nbr_enc(nbrs).relu().sum(1)           # sum pooling over the crowd
        s = self.social_emb(self.norm(social))
        h = torch.zeros(B, self.d)
        c = torch.zeros(B, self.d)
        for t in range(T):
            h, c = self.cell(torch.cat([self.pos_emb(own[:, t]), s], -1), (h, c))
        return self.out(h)


def _batch(g, B, N, T):
    drift = torch.randn(B, 1, 2, generator=g) * 0.5                # crowd flow direction
    nbrs = torch.cat([5.0 * torch.randn(B, N, 2, generator=g), drift + 0.2 * torch.randn(B, N, 2, generator=g)], -1)
    own = 0.1 * torch.randn(B, T, 2, generator=g)
    y = drift[:, 0]
    return (own, nbrs), y


def build(seed: int, fixed: bool = False) -> dict:
    d, N, lr, B = [(32, 200, 3e-3, 16), (24, 300, 3e-3, 12), (32, 250, 2e-3, 24)][seed % 3]
    torch.manual_seed(seed)
    model = SocialLSTM(d, fixed)
    g = torch.Generator().manual_seed(14000 + seed)
    steps = 100
    batches = [_batch(g, B, N, 6) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
