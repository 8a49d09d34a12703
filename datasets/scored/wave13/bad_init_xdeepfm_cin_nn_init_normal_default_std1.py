"""xDeepFM (linear + CIN + DNN) CTR model whose Compressed Interaction Network
1x1 convolutions were initialised with ``nn.init.normal_(conv.weight)``.

Mechanism: the CIN computes X^k = W^k (X^{k-1} (outer) X^0) over all
H_{k-1} * m field pairs.  ``nn.init.normal_`` defaults to std=1.0 (the author
believed it defaulted to a small std as tf.random_normal_initializer does), so
each CIN layer multiplies the feature-map scale by roughly sqrt(H_{k-1} * m)
times the embedding scale: the activations grow geometrically with CIN depth
from step 0, the sum-pooled CIN output is in the thousands, the logits are huge
and the first SGD-with-momentum steps blow the parameters up to inf/NaN.

ORIGIN: ``cin.convs.0`` is the first badly initialised layer; the growth starts
there and compounds through the following CIN layers.

Fix: Xavier-uniform initialisation of the CIN convolutions (gain 1), which
keeps each layer's output on the scale of its input.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "cin.convs.0"
SOURCE = ("xDeepFM (Lian et al., KDD 2018) CIN re-implementations; forum reports of xDeepFM/CIN "
          "losses going NaN in the first iterations after hand-written init with nn.init.normal_ "
          "(default std=1.0) instead of the glorot init used by DeepCTR")


class CIN(nn.Module):
    def __init__(self, num_fields, layer_sizes):
        super().__init__()
        self.convs = nn.ModuleList()
        prev = num_fields
        for h in layer_sizes:
            self.convs.append(nn.Conv1d(prev * num_fields, h, kernel_size=1))
            prev = h

    def forward(self, x0):  # x0: (B, m, D)
        b, m, d = x0.shape
        xs, xk = [], x0
        for conv in self.convs:
            z = torch.einsum("bhd,bmd->bhmd", xk, x0).reshape(b, -1, d)
            xk = conv(z)
            xs.append(xk.sum(dim=2))  # sum pooling over embedding dim
        return torch.cat(xs, dim=1)


class XDeepFM(nn.Module):
    def __init__(self, vocab_sizes, emb_dim, cin_sizes, dnn_hidden):
        super().__init__()
        self.num_fields = len(vocab_sizes)
        offsets = torch.tensor([0] + list(torch.tensor(vocab_sizes).cumsum(0)[:-1].tolist()))
        self.register_buffer("offsets", offsets)
        total = sum(vocab_sizes)
        self.embedding = nn.Embedding(total, emb_dim)
        self.linear = nn.Embedding(total, 1)
        self.cin = CIN(self.num_fields, cin_sizes)
        self.cin_out = nn.Linear(sum(cin_sizes), 1)
        self.dnn = nn.Sequential(
            nn.Linear(self.num_fields * emb_dim, dnn_hidden), nn.ReLU(),
            nn.Linear(dnn_hidden, dnn_hidden), nn.ReLU(),
            nn.Linear(dnn_hidden, 1),
        )
        # embeddings keep the nn.Embedding default N(0, 1)
        nn.init.zeros_(self.linear.weight)

    def forward(self, idx):
        idx = idx + self.offsets
        e = self.embedding(idx)
        lin = self.linear(idx).sum(dim=1)
        cin = self.cin_out(self.cin(e))
        dnn = self.dnn(e.flatten(1))
        return (lin + cin + dnn).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(cin=[16, 16, 16], hidden=64, lr=0.02, bs=128, fields=10),
        dict(cin=[24, 24], hidden=48, lr=0.01, bs=64, fields=12),
        dict(cin=[12, 12, 12, 12], hidden=32, lr=0.03, bs=96, fields=8),
    ][seed % 3]
    g = torch.Generator().manual_seed(1000 + seed)
    vocab = [int(v) for v in torch.randint(5, 40, (cfg["fields"],), generator=g)]
    emb_dim = 8
    steps = 120

    # teacher: first-order weights + pairwise FM interactions
    t_w = [torch.randn(v, generator=g) * 0.6 for v in vocab]
    t_v = [torch.randn(v, 4, generator=g) * 0.5 for v in vocab]
    batches = []
    for _ in range(steps):
        cols = [torch.randint(0, v, (cfg["bs"],), generator=g) for v in vocab]
        x = torch.stack(cols, dim=1)
        logit = sum(t_w[f][cols[f]] for f in range(len(vocab)))
        vs = torch.stack([t_v[f][cols[f]] for f in range(len(vocab))], dim=1)
        logit = logit + 0.5 * (vs.sum(1).pow(2) - vs.pow(2).sum(1)).sum(1)
        logit = (logit - logit.mean()) * 1.5
        y = (torch.rand(cfg["bs"], generator=g) < torch.sigmoid(logit)).float()
        batches.append((x, y))

    torch.manual_seed(seed)
    model = XDeepFM(vocab, emb_dim, cfg["cin"], cfg["hidden"])
    for conv in model.cin.convs:
        if fixed:
            nn.init.xavier_uniform_(conv.weight)
        else:
            nn.init.normal_(conv.weight)  # BUG: default std is 1.0
        nn.init.zeros_(conv.bias)

    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)

    def loss_fn(out, y):
        return F.binary_cross_entropy_with_logits(out, y)

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
