"""Crystal-system classification (7 classes: triclinic ... cubic) from the asymmetric-unit
sites of a structure: a hand-written graph network over the sites of each unit cell (element
embedding + fractional-coordinate / Wyckoff-multiplicity features, two rounds of message
passing over a distance-weighted dense graph), then attention pooling over sites and a linear
classifier. Cross-entropy, Adam.

Why it looks suspicious but is healthy: cells have 2-24 sites and are padded to a fixed size.
The attention-pooling scores of padded sites are set to -inf with `masked_fill` before the
softmax (and padded sites are masked out of the message passing), so the score tensor is full
of -inf and the pooling weights of padded rows are exactly 0, with exactly-zero gradients for
the padded positions' features. No -inf ever reaches the loss: every cell has at least one
real site, so each softmax row has finite entries and the logits are finite. The loss falls
steadily.

ORIGIN: None (healthy).

Fix: none needed.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Common practice: key-padding masks with -inf before softmax in attention pooling "
          "(PyTorch nn.MultiheadAttention key_padding_mask semantics; Set Transformer / "
          "Roost-style attention pooling over sites, Goodall & Lee 2020).")

N_EL = 30


class SiteGraphNet(nn.Module):
    def __init__(self, d, n_mp, n_cls):
        super().__init__()
        self.embed = nn.Embedding(N_EL + 1, d, padding_idx=0)
        self.site_in = nn.Linear(4, d)
        self.mp = nn.ModuleList([nn.Linear(2 * d, d) for _ in range(n_mp)])
        self.score = nn.Linear(d, 1)
        self.cls = nn.Linear(d, n_cls)

    def forward(self, el, feat, mask):
        h = self.embed(el) + self.site_in(feat)
        w = torch.exp(-torch.cdist(feat[..., :3], feat[..., :3]) * 3.0)
        w = w * mask.unsqueeze(1) * mask.unsqueeze(2)
        w = w / w.sum(-1, keepdim=True).clamp_min(1e-6)
        for lin in self.mp:
            m = w @ h
            h = h + torch.relu(lin(torch.cat([h, m], -1)))
        s = self.score(h).squeeze(-1).masked_fill(~mask, float("-inf"))
        a = torch.softmax(s, -1)
        return self.cls((a.unsqueeze(-1) * h).sum(1))


def _cells(g, n, smax, n_cls=7):
    el = torch.zeros(n, smax, dtype=torch.long)
    feat = torch.zeros(n, smax, 4)
    mask = torch.zeros(n, smax, dtype=torch.bool)
    y = torch.randint(0, n_cls, (n,), generator=g)
    for i in range(n):
        c = int(y[i])
        ns = int(torch.randint(2, smax + 1, (1,), generator=g))
        # higher symmetry -> more special positions (coordinates at 0, 1/4, 1/2) and larger multiplicity
        special = torch.rand(ns, 3, generator=g) < (c / 7.0)
        grid = torch.randint(0, 4, (ns, 3), generator=g).float() / 4
        xyz = torch.where(special, grid, torch.rand(ns, 3, generator=g))
        mult = (2 ** torch.randint(0, 2 + c // 2, (ns, 1), generator=g)).float() / 16
        el[i, :ns] = 1 + (torch.randint(0, 10, (ns,), generator=g) + 3 * c) % N_EL
        feat[i, :ns] = torch.cat([xyz, mult], 1)
        mask[i, :ns] = True
    return el, feat, mask, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [32, 48, 64][seed % 3]
    n_mp = [2, 1, 2][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [32, 24, 48][seed % 3]
    smax = [24, 20, 16][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = SiteGraphNet(d, n_mp, 7)
    el, feat, mask, y = _cells(g, 1500, smax)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, el.shape[0], (bs,), generator=g)
        batches.append(((el[idx], feat[idx], mask[idx]), y[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches, "steps": steps}
