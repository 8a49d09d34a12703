"""Attention-based multiple-instance learning (Ilse et al. 2018) for slide-level classification:
a tile CNN encoder, a gated-attention pooling over the padded bag of tiles, a bag classifier.

Mechanism: bags are padded to a fixed number of tiles and the attention scores of padding tiles
are masked with -inf before the softmax. Slides where tissue detection finds no tissue tile
(blank or pen-mark-only slides, labelled negative) are legitimate bags with zero real tiles: the
whole row of scores is -inf, softmax gives 0/0 = NaN attention, and the NaN goes through the
pooled feature to the loss and into every weight. Calm until the first empty bag.
ORIGIN: attention, the scoring module whose masked softmax has no valid entry.
Fix: guard the empty bag (nan_to_num on the attention weights, i.e. pooled feature = 0).
"""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "attention"
SOURCE = "AMLab-Amsterdam/AttentionDeepMIL gated attention; padded-bag implementations (CLAM-style) with masked_fill(-inf) on empty slides"


class GatedAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.V = nn.Linear(d, h)
        self.U = nn.Linear(d, h)
        self.w = nn.Linear(h, 1)

    def forward(self, f, mask, guard):
        s = self.w(torch.tanh(self.V(f)) * torch.sigmoid(self.U(f))).squeeze(-1)
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=1)
        return torch.nan_to_num(a, nan=0.0) if guard else a


class AttnMIL(nn.Module):
    def __init__(self, w, d, guard):
        super().__init__()
        self.guard = guard
        self.encoder = nn.Sequential(nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                     nn.Conv2d(w, w, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                     nn.Flatten(), nn.Linear(w, d), nn.ReLU())
        self.attention = GatedAttention(d, 32)
        self.classifier = nn.Linear(d, 1)

    def forward(self, tiles, mask):
        B, N = mask.shape
        f = self.encoder(tiles.flatten(0, 1)).view(B, N, -1)
        a = self.attention(f, mask, self.guard)
        return self.classifier((a.unsqueeze(-1) * f).sum(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, d, bs, lr, steps, bad = [(8, 32, 4, 3e-3, 50, 19), (12, 24, 3, 2e-3, 60, 31), (8, 48, 5, 4e-3, 40, 11)][seed % 3]
    N = 8
    model = AttnMIL(w, d, guard=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    batches = []
    for i in range(steps):
        y = (torch.rand(bs, generator=g) < 0.5).float()
        n_real = torch.randint(2, N + 1, (bs,), generator=g)
        if i == bad:
            n_real[0] = 0; y[0] = 0.0  # blank slide: no tissue tile, negative label
        tiles = torch.rand(bs, N, 3, 8, 8, generator=g)
        for b in range(bs):
            if y[b] > 0 and n_real[b] > 0:
                tiles[b, 0] += 2.0  # one tumour tile
        mask = torch.arange(N)[None, :] < n_real[:, None]
        batches.append(((tiles, mask), y))
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
