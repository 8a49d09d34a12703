"""In-vehicle CAN intrusion detector: every 100 ms window of bus traffic becomes a small graph
whose nodes are the arbitration IDs seen in the window and whose edges are the observed ID->ID
transitions (consecutive frames).  Node features are a learned per-ID embedding
(nn.Embedding(sparse=True) over the 2048 standard 11-bit IDs) plus the ID's frame count and
payload byte entropy; a hand-written two-layer GCN (symmetric-normalised adjacency with self
loops) and a masked mean readout classify the window as normal / DoS / fuzzing / spoofing.
Cross-entropy summed over the batch, Adagrad (which supports the sparse embedding gradient).

Why it looks suspicious but is healthy: the embedding gradient is sparse and most rows are
exactly zero at every step (only the ~20 IDs present in the batch get a gradient; the 2000+
unused IDs never move); padded node slots contribute exact zeros; the loss is a batch sum
(values of 50-100 at the start); fuzzing windows contain random IDs never seen before, so the
loss spikes on batches with many of them.  It learns.

ORIGIN: None (healthy).

Fix: nothing to fix.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Known pattern: graph-based CAN intrusion detection on ID-transition graphs (e.g. "
          "Islam et al. 2020 'Graph-based intrusion detection system for CAN'; Car-Hacking "
          "dataset DoS/fuzzy/spoofing classes); sparse embeddings with Adagrad (PyTorch docs)")

N_IDS = 2048


class DenseGCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, h, a_norm):
        return torch.relu(a_norm @ self.lin(h))


class CanGraphIDS(nn.Module):
    def __init__(self, d, n_cls):
        super().__init__()
        self.id_emb = nn.Embedding(N_IDS, d, sparse=True)
        self.feat = nn.Linear(2, d)
        self.gcn1 = DenseGCNLayer(d, d)
        self.gcn2 = DenseGCNLayer(d, d)
        self.cls = nn.Linear(d, n_cls)

    def forward(self, ids, feats, adj, mask):
        h = (self.id_emb(ids) + self.feat(feats)) * mask[..., None]
        a = adj + torch.diag_embed(mask)
        deg = a.sum(-1).clamp_min(1.0)
        a_norm = a / deg.sqrt()[..., None] / deg.sqrt()[:, None, :]
        h = self.gcn1(h, a_norm)
        h = self.gcn2(h, a_norm) * mask[..., None]
        pooled = h.sum(1) / mask.sum(1, keepdim=True)
        return self.cls(pooled)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [32, 48, 24][seed % 3]
    lr = [0.05, 0.03, 0.08][seed % 3]
    bs = [48, 64, 32][seed % 3]
    n_nodes = 24
    steps = 150
    normal_ids = torch.randperm(N_IDS, generator=g)[:20]
    spoof_target = normal_ids[3]
    model = CanGraphIDS(d, 4)

    batches = []
    for _ in range(steps):
        y = torch.randint(0, 4, (bs,), generator=g)
        ids = torch.zeros(bs, n_nodes, dtype=torch.long)
        feats = torch.zeros(bs, n_nodes, 2)
        adj = torch.zeros(bs, n_nodes, n_nodes)
        mask = torch.zeros(bs, n_nodes)
        for b in range(bs):
            k = int(torch.randint(10, 17, (1,), generator=g))
            node_ids = normal_ids[torch.randperm(20, generator=g)[:k]].clone()
            count = torch.rand(k, generator=g) * 0.5 + 0.2
            entropy = torch.rand(k, generator=g) * 0.4 + 0.2
            if y[b] == 1:                        # DoS: ID 0x000 flooding
                node_ids[0] = 0
                count[0] = 3.0 + torch.rand(1, generator=g)
            elif y[b] == 2:                      # fuzzing: random unseen IDs, random payloads
                m = int(torch.randint(3, 7, (1,), generator=g))
                node_ids[:m] = torch.randint(1, N_IDS, (m,), generator=g)
                entropy[:m] = 0.9 + 0.1 * torch.rand(m, generator=g)
            elif y[b] == 3:                      # spoofing: injected copies of one ECU's ID
                node_ids[0] = spoof_target
                count[0] = 1.2 + 0.3 * torch.rand(1, generator=g)
                entropy[0] = 0.05
            ids[b, :k] = node_ids
            feats[b, :k] = torch.stack([count, entropy], -1)
            mask[b, :k] = 1.0
            order = torch.randint(0, k, (3 * k,), generator=g)
            adj[b, order[:-1], order[1:]] = 1.0
            adj[b] = ((adj[b] + adj[b].T) > 0).float()
            adj[b].fill_diagonal_(0.0)
        batches.append(((ids, feats, adj, mask), y))

    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(reduction="sum"),
                batches=batches, steps=steps)
