"""FiBiNET (Huang et al., RecSys 2019) CTR model: field embeddings, a SENET
squeeze-excitation layer that re-weights the fields, bilinear interactions
(p on the raw embeddings, q on the SENET-weighted ones), and a ReLU DNN on
[embeddings, p, q] that produces the click logit.  Trained with
BCEWithLogitsLoss.

Mechanism: the author wanted the usual "prior" initialisation of the output
bias, b = log(ctr / (1 - ctr)) (about -0.7 here, CTR ~ 0.33), so that the initial
loss equals the label entropy.  The loop was written over ``self.dnn.modules()``
and therefore set that negative constant as the bias of EVERY Linear of the DNN.
The DNN inputs are O(0.01-0.1) at init, so every hidden pre-activation is
~ -0.7 + small: all units of the first hidden ReLU are zero for every sample
from step 0.  No gradient reaches the hidden weights, the bilinear layers, the
SENET or the embeddings; only the output bias moves, and it already sits at the
optimum.  The loss stays at the label entropy for the whole run.

ORIGIN is ``dnn.1``: the first hidden ReLU, dead on every sample from the start
(it blocks every path from the loss to the lower layers).

Fix: apply the prior bias only to the output Linear (hidden biases stay at the
default), nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "dnn.1"
SOURCE = ("FiBiNET (Sina Weibo, RecSys'19); prior-probability output-bias init "
          "(as in RetinaNet/CTR practice) mistakenly applied to every Linear in the tower")


class SENET(nn.Module):
    def __init__(self, fields, ratio=3):
        super().__init__()
        r = max(1, fields // ratio)
        self.excite = nn.Sequential(nn.Linear(fields, r), nn.ReLU(), nn.Linear(r, fields), nn.ReLU())

    def forward(self, e):                       # (B, F, k)
        a = self.excite(e.mean(dim=2))
        return e * a.unsqueeze(2)


class Bilinear(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.W = nn.Linear(k, k, bias=False)

    def forward(self, e):
        f = e.shape[1]
        i, j = torch.triu_indices(f, f, offset=1)
        return (self.W(e[:, i]) * e[:, j]).flatten(1)


class FiBiNET(nn.Module):
    def __init__(self, vocab_sizes, k, hidden):
        super().__init__()
        f = len(vocab_sizes)
        self.embeddings = nn.ModuleList(nn.Embedding(v, k) for v in vocab_sizes)
        for e in self.embeddings:
            nn.init.normal_(e.weight, std=0.1)
        self.senet = SENET(f)
        self.bilinear_p = Bilinear(k)
        self.bilinear_q = Bilinear(k)
        d_in = f * k + 2 * (f * (f - 1) // 2) * k
        layers, prev = [], d_in
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.ReLU()]
            prev = h
        layers.append(nn.Linear(prev, 1))
        self.dnn = nn.Sequential(*layers)

    def forward(self, x):
        e = torch.stack([emb(x[:, i]) for i, emb in enumerate(self.embeddings)], dim=1)
        v = self.senet(e)
        h = torch.cat([e.flatten(1), self.bilinear_p(e), self.bilinear_q(v)], dim=1)
        return self.dnn(h).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(fields=6, k=8, hidden=[128, 64], bs=256, opt="adam", lr=2e-3, steps=100),
        dict(fields=8, k=6, hidden=[64, 64, 32], bs=128, opt="adagrad", lr=0.05, steps=120),
        dict(fields=5, k=10, hidden=[200], bs=192, opt="adam", lr=1e-3, steps=90),
    ][seed % 3]
    g = torch.Generator().manual_seed(2024 + seed)
    f = cfg["fields"]
    vocab = [int(v) for v in torch.randint(10, 50, (f,), generator=g)]
    n = 8000
    x = torch.stack([torch.randint(0, v, (n,), generator=g) for v in vocab], dim=1)
    w = [torch.randn(v, generator=g) * 1.5 for v in vocab]
    tf = [torch.randn(v, 3, generator=g) for v in vocab]
    logit = sum(w[i][x[:, i]] for i in range(f))
    for i in range(f):
        for j in range(i + 1, f):
            logit = logit + 0.4 * (tf[i][x[:, i]] * tf[j][x[:, j]]).sum(1)
    logit = (logit - logit.mean()) / logit.std() * 3.0 - 1.5
    y = torch.bernoulli(torch.sigmoid(logit), generator=g)
    ctr = float(y.mean())
    prior = math.log(ctr / (1.0 - ctr))

    torch.manual_seed(seed)
    model = FiBiNET(vocab, cfg["k"], cfg["hidden"])
    if fixed:
        nn.init.constant_(model.dnn[-1].bias, prior)
    else:
        for m in model.dnn.modules():               # meant: only the output layer
            if isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, prior)

    if cfg["opt"] == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    else:
        opt = torch.optim.Adagrad(model.parameters(), lr=cfg["lr"])
    loss_fn = nn.BCEWithLogitsLoss()
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n, (cfg["bs"],), generator=g)
        batches.append((x[idx], y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
