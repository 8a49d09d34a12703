"""TGN-style temporal link predictor whose message aggregator SUMS a node's event history.

Mechanism: the memory of a node is built by aggregating all of its past interaction
messages. TGN offers "last" and "mean" aggregators; here the user wrote a plain sum.
Active nodes carry hundreds of past events, so the memory vectors are hundreds of
times larger than one message. The embedding MLP and the TGN MergeLayer decoder pass
that scale straight through, and the affinity logits reach |z| ~ 1e2-1e4. The decoder
ends, as in the TGN reference code, in `.sigmoid()` followed by `nn.BCELoss`: the
sigmoid returns exactly 0.0 or 1.0 in float32, BCELoss clamps log(0) to -100 and its
backward multiplies by p(1-p) == 0, so every wrongly pinned pair contributes loss 100
and exactly zero gradient. The loss sits at ~100 x (fraction of wrongly pinned pairs)
for the whole run.

ORIGIN: `decoder.act`, the nn.Sigmoid of the affinity head, is where the units pin and
where the gradient is cut to zero.

Fix: aggregate the messages with a mean (divide the masked sum by the event count), as
TGN's "mean" aggregator does; logits become O(1) and the model learns the links.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "decoder.act"
SOURCE = ("TGN (Rossi et al. 2020) reference code: MergeLayer affinity score -> .sigmoid() -> "
          "torch.nn.BCELoss; message aggregator written as a sum instead of 'mean'/'last'")


class MergeLayer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = nn.Linear(2 * d, h)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(h, 1)
        self.act = nn.Sigmoid()

    def forward(self, zu, zv):
        return self.act(self.fc2(self.relu(self.fc1(torch.cat([zu, zv], -1))))).squeeze(-1)


class TemporalLinkPredictor(nn.Module):
    def __init__(self, d_msg, d_emb, mean_agg):
        super().__init__()
        self.mean_agg = mean_agg
        self.embed = nn.Sequential(nn.Linear(d_msg, d_emb), nn.ReLU(), nn.Linear(d_emb, d_emb))
        self.decoder = MergeLayer(d_emb, d_emb)

    def memory(self, ev, mask):
        s = (ev * mask.unsqueeze(-1)).sum(1)
        if self.mean_agg:
            s = s / mask.sum(1, keepdim=True).clamp_min(1.0)
        return s

    def forward(self, raw_msgs, msg_mask, u, v):
        # raw_msgs: (num_nodes, max_events, d_msg) message store; u, v: (B,) node ids
        zu = self.embed(self.memory(raw_msgs[u], msg_mask[u]))
        zv = self.embed(self.memory(raw_msgs[v], msg_mask[v]))
        return self.decoder(zu, zv)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d_msg = [16, 12, 20][seed % 3]
    d_emb = [32, 48, 40][seed % 3]
    bs = [64, 96, 48][seed % 3]
    steps = [120, 100, 140][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    max_len = [1500, 1000, 2000][seed % 3]
    n_comm = 4
    n_nodes = 300
    centers = torch.randn(n_comm, d_msg, generator=g) * 1.5
    comm = torch.randint(0, n_comm, (n_nodes,), generator=g)
    n_events = torch.randint(max_len // 3, max_len, (n_nodes,), generator=g)

    # raw message store: every past interaction of every node (edge features are
    # non-negative counts/durations, so the messages share a positive offset)
    raw_msgs = (centers[comm].unsqueeze(1) + 2.0
                + torch.randn(n_nodes, max_len, d_msg, generator=g)).abs()
    msg_mask = (torch.arange(max_len).unsqueeze(0) < n_events.unsqueeze(1)).float()

    batches = []
    for _ in range(steps):
        u = torch.randint(0, n_nodes, (bs,), generator=g)
        v = torch.randint(0, n_nodes, (bs,), generator=g)
        pos = torch.rand(bs, generator=g) < 0.5
        # positives: interaction inside the community (re-draw v from u's community)
        for i in torch.nonzero(pos).flatten().tolist():
            cand = torch.nonzero(comm == comm[u[i]]).flatten()
            v[i] = cand[torch.randint(0, cand.numel(), (1,), generator=g)]
        y = (comm[u] == comm[v]).float()
        batches.append(((raw_msgs, msg_mask, u, v), y))

    model = TemporalLinkPredictor(d_msg, d_emb, mean_agg=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(), batches=batches, steps=steps)
