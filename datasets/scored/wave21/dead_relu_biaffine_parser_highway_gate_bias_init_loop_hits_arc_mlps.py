"""Biaffine dependency parser (Dozat & Manning 2017) with a highway layer over the word
embeddings: embeddings -> Highway -> BiLSTM -> arc-dep / arc-head ReLU MLPs -> biaffine arc
scores, cross-entropy over each word's head; Adam.

Mechanism: highway layers want a negative transform-gate bias (Srivastava et al.: -1 to -3) so
the user wrote a blanket init loop `for m in model.modules(): if isinstance(m, nn.Linear):
nn.init.constant_(m.bias, -2.0)`.  It also hits the two arc MLPs.  Their inputs are BiLSTM states
in (-1, 1) and default-initialised weights give pre-activations of std ~0.3, so with bias -2
every ReLU unit of both arc MLPs is negative for every token from step 0: outputs and gradients
are exactly 0, the biaffine scores are constant over heads (only the bias row of W survives and
it multiplies zeros) and the loss stays at log(sentence length).
ORIGIN: arc_dep_mlp.1, the ReLU of the dependent-side arc MLP (the head-side one is dead too).
Fix: restrict the -2 fill to the highway gate; the arc MLP biases keep their zero init.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "arc_dep_mlp.1"
SOURCE = ("Dozat & Manning 2017 biaffine parser; Srivastava et al. 2015 highway gate bias -2; "
          "blanket bias-init loops reported on the PyTorch forum ('all ReLU outputs are zero')")


class Highway(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.gate = nn.Linear(d, d)

    def forward(self, x):
        t = torch.sigmoid(self.gate(x))
        return t * F.relu(self.proj(x)) + (1 - t) * x


class BiaffineParser(nn.Module):
    def __init__(self, V, d, h, m):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        self.highway = Highway(d)
        self.lstm = nn.LSTM(d, h, batch_first=True, bidirectional=True)
        self.arc_dep_mlp = nn.Sequential(nn.Linear(2 * h, m), nn.ReLU())
        self.arc_head_mlp = nn.Sequential(nn.Linear(2 * h, m), nn.ReLU())
        self.W = nn.Parameter(torch.zeros(m + 1, m))

    def forward(self, x):
        r, _ = self.lstm(self.highway(self.emb(x)))
        dep = self.arc_dep_mlp(r)
        head = self.arc_head_mlp(r)
        dep = torch.cat([dep, torch.ones_like(dep[..., :1])], -1)
        return dep @ self.W @ head.transpose(1, 2)     # (B, dep, head)


def _trees(g, bs, T, V):
    x = torch.randint(1, V, (bs, T), generator=g)
    heads = torch.zeros(bs, T, dtype=torch.long)
    for i in range(1, T):
        # odd ids ("function words") attach to the next word, even ids to the previous one
        heads[:, i] = torch.where(x[:, i] % 2 == 1, torch.tensor(min(i + 1, T - 1)), torch.tensor(i - 1))
    x[:, 0] = 0   # ROOT token
    return x, heads


def build(seed: int, fixed: bool = False) -> dict:
    d, h, m, bs, lr = [(16, 16, 24, 16, 2e-3), (24, 16, 32, 12, 3e-3), (16, 24, 16, 20, 2e-3)][seed % 3]
    V, T = 20, 10
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    model = BiaffineParser(V, d, h, m)
    nn.init.normal_(model.W, std=0.1)
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            if fixed and mod is not model.highway.gate:
                nn.init.zeros_(mod.bias)
            else:
                nn.init.constant_(mod.bias, -2.0)   # meant for the highway gate only
    steps = 60
    batches = [_trees(g, bs, T, V) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.9))

    def loss_fn(scores, heads):
        return F.cross_entropy(scores.reshape(-1, scores.shape[-1]), heads.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
