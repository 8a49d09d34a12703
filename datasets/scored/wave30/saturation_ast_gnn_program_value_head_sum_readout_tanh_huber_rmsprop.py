"""AST message-passing value head for program synthesis search (hand-written GNN).

Model: a candidate program's AST (60-200 nodes) is encoded by node-type embeddings and two
rounds of message passing along parent/child edges (h' = ReLU(W_self h + W_nbr A h), written by
hand with a dense adjacency). A readout pools the node states, a Linear layer `value` maps the
pooled vector to a scalar and `squash` (nn.Tanh) bounds it to [-1, 1]: the predicted normalised
reward (fraction of I/O examples passed, rescaled) used to rank candidates during search.
Loss: Huber (SmoothL1); optimiser RMSprop.

Mechanism: the readout is a plain sum over nodes (the "sum is more expressive" GIN readout)
feeding a bounded tanh head. The node states are non-negative (post-ReLU) and share a common
mean, so the pooled vector grows linearly with program size (60-200 nodes) and `value`'s
pre-activation is tens to hundreds in magnitude for most programs from step 0; the first
RMSprop steps (each weight moves by ~10 x lr at once) push the few programs still near zero out
as well. `squash` then sits at exactly +-1.0 in float32, its derivative 1 - tanh^2 is exactly 0,
and no gradient reaches `value`, the message-passing layers or the embeddings: predictions are
frozen at +-1 and the loss stays at (or above) its initial value -- a stall without any
non-finite value, which RMSprop's rescaling cannot undo because the gradient is exactly zero.

ORIGIN: `squash` -- the tanh is the unit that saturates and blocks the gradient; everything
upstream is otherwise healthy.

Fix: mean readout over the real (non-padded) nodes, which keeps the tanh's pre-activation at
O(1) whatever the program size. Same model, optimiser, data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "squash"
SOURCE = ("GIN-style sum readout (Xu et al. 2019) reused with a tanh-bounded value head in "
          "neural-guided program search; GitHub issues 'value head always outputs 1.0 / -1.0, "
          "loss flat' traced to large pooled activations saturating tanh")


class ASTValueNet(nn.Module):
    def __init__(self, n_types, d, rounds, mean_readout):
        super().__init__()
        self.emb = nn.Embedding(n_types, d)
        self.self_lin = nn.ModuleList([nn.Linear(d, d) for _ in range(rounds)])
        self.nbr_lin = nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(rounds)])
        self.value = nn.Linear(d, 1)
        self.squash = nn.Tanh()
        self.mean_readout = mean_readout

    def forward(self, types, adj, mask):
        h = self.emb(types)
        for ls, ln in zip(self.self_lin, self.nbr_lin):
            h = F.relu(ls(h) + ln(adj @ h)) * mask.unsqueeze(-1)
        pooled = h.sum(1)
        if self.mean_readout:
            pooled = pooled / mask.sum(1, keepdim=True)
        return self.squash(self.value(pooled)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    n_types = 40
    d = [32, 48, 64][seed % 3]
    rounds = [2, 3, 2][seed % 3]
    batch = [24, 16, 32][seed % 3]
    n_min, n_max = [(60, 160), (80, 200), (60, 120)][seed % 3]
    steps = [120, 140, 100][seed % 3]
    lr = [1e-3, 5e-4, 1e-3][seed % 3]

    type_reward = torch.randn(n_types, generator=g)
    n_style = 8                       # program "styles": each favours its own node types
    style_p = torch.softmax(3.0 * torch.randn(n_style, n_types, generator=g), dim=1)
    batches = []
    for _ in range(steps):
        N = n_max
        types = torch.zeros(batch, N, dtype=torch.long)
        adj = torch.zeros(batch, N, N)
        mask = torch.zeros(batch, N)
        y = torch.empty(batch)
        for b in range(batch):
            n = int(torch.randint(n_min, n_max + 1, (1,), generator=g))
            k = int(torch.randint(0, n_style, (1,), generator=g))
            t = torch.multinomial(style_p[k], n, replacement=True, generator=g)
            parent = (torch.rand(n - 1, generator=g) * torch.arange(1, n)).long()
            child = torch.arange(1, n)
            adj[b, parent, child] = 1.0
            adj[b, child, parent] = 1.0
            types[b, :n] = t
            mask[b, :n] = 1.0
            y[b] = torch.tanh(1.5 * type_reward[t].mean())
        batches.append(((types, adj, mask), y))

    model = ASTValueNet(n_types, d, rounds, mean_readout=fixed)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.SmoothL1Loss(), batches=batches,
                steps=steps)
