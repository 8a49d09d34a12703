"""AlphaZero-style policy network on graphs: a hand-written message-passing GNN distilled from MCTS.

Data: random routing instances (N customer nodes in the unit square, k-nearest-neighbour graph, one
node flagged as the vehicle's current position).  The training target for each instance is the MCTS
visit-count distribution over which node to visit next (simulated as a temperature-softmax of
negative travel cost from the current node, zero mass on the current node) -- the "policy target"
of AlphaZero/MuZero.  Model: node encoder, L rounds of message passing (mean over neighbours,
edge MLP on [h_i, h_j, d_ij], GELU, residual), node-wise logit head; loss = cross-entropy between the
visit distribution and the softmax over nodes.

Mechanism: Adam at lr = 0.05-0.06 with no warm-up (the value from a small linear probe).  The first
updates move every weight by ~lr; the residual message passing amplifies them layer by layer, so the
node logits jump to large magnitudes in arbitrary directions and the overconfident wrong predictions
keep the steps at full size.  Within a few dozen steps the GELU pre-activations have been thrown
deep into their flat negative range, the logits become a constant and the policy is back at
uniform: the loss sits at (or, while it still oscillates, above) its initial value log(N) for the
rest of the run.  Nothing becomes non-finite.

ORIGIN: None -- an optimiser setting, not a module.

Fix: Adam lr = 1e-3 (same model, data and schedule).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("AlphaZero policy-target distillation (Silver et al. 2018) with GNN policies for routing "
          "(Kool et al. 2019; Dai et al. 2017); training that oscillates/plateaus at high Adam lr "
          "without warm-up (Liu et al. 2020 'On the variance of the adaptive learning rate')")


class MPNNPolicy(nn.Module):
    def __init__(self, width, rounds):
        super().__init__()
        self.encoder = nn.Linear(3, width)
        self.edge_mlps = nn.ModuleList([nn.Sequential(nn.Linear(2 * width + 1, width), nn.GELU(),
                                                      nn.Linear(width, width))
                                        for _ in range(rounds)])
        self.node_mlps = nn.ModuleList([nn.Sequential(nn.Linear(2 * width, width), nn.GELU())
                                        for _ in range(rounds)])
        self.head = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, 1))

    def forward(self, feats, nbr, dist):
        # feats [B, N, 3]; nbr [B, N, k] neighbour indices; dist [B, N, k]
        h = self.encoder(feats)
        B, N, k = nbr.shape
        idx = nbr.reshape(B, N * k, 1)
        for edge_mlp, node_mlp in zip(self.edge_mlps, self.node_mlps):
            hj = torch.gather(h, 1, idx.expand(-1, -1, h.shape[-1])).reshape(B, N, k, -1)
            hi = h.unsqueeze(2).expand(-1, -1, k, -1)
            m = edge_mlp(torch.cat([hi, hj, dist.unsqueeze(-1)], -1)).mean(2)
            h = h + node_mlp(torch.cat([h, m], -1))
        return self.head(h).squeeze(-1)                      # node logits [B, N]


def _soft_ce(logits, target_probs):
    return F.cross_entropy(logits, target_probs)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    N, k = [16, 20, 12][seed % 3], 5
    width = [64, 48, 96][seed % 3]
    rounds = [3, 4, 3][seed % 3]
    batch = [32, 24, 48][seed % 3]
    lr = 1e-3 if fixed else [0.06, 0.05, 0.06][seed % 3]
    steps = 150

    batches = []
    for _ in range(steps):
        xy = torch.rand(batch, N, 2, generator=g)
        d = torch.cdist(xy, xy)
        dist, nbr = d.topk(k + 1, largest=False)
        dist, nbr = dist[..., 1:], nbr[..., 1:]
        cur = torch.randint(0, N, (batch,), generator=g)
        flag = F.one_hot(cur, N).float().unsqueeze(-1)
        feats = torch.cat([xy, flag], -1)
        cost = d[torch.arange(batch), cur]                         # travel cost from current node
        visit_logits = -cost / 0.08
        visit_logits[torch.arange(batch), cur] = -1e9
        target = torch.softmax(visit_logits, -1)
        batches.append(((feats, nbr, dist), target))

    torch.manual_seed(seed)
    model = MPNNPolicy(width, rounds)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": _soft_ce, "batches": batches,
            "steps": steps}
