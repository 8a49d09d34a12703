"""Wide & Deep (Cheng et al., DLRS 2016) regressing the watch-completion rate
of a recommended video (a fraction in [0, 1]): the wide part is a linear
model over hashed cross-product features (user-segment x item-tag, query x
category, ...), implemented as ``nn.EmbeddingBag(n_buckets, 1, mode="sum")``;
the deep part embeds a few id fields into a ReLU MLP; the two logits are
added and squashed by a sigmoid, and the loss is MSE against the rate.
Plain SGD with momentum.

Mechanism: the wide weights were left at PyTorch's default ``nn.Embedding``/
``nn.EmbeddingBag`` initialisation, N(0, 1) (TensorFlow's linear model starts
at zero).  Each example activates 350-700 hashed crosses, so the wide logit is
a sum of hundreds of unit-variance weights with a standard deviation of
~20-25.  The output sigmoid is saturated at 0 or 1 from step 0 on nearly every
example, its derivative p(1-p) is 1e-4..1e-10, and under MSE every gradient (wide weights,
deep tower, embeddings) is multiplied by it.  SGD moves nothing; the loss
stays at the error of a random 0/1 predictor.

ORIGIN is ``out_act``: the output sigmoid is the saturated unit that blocks
every gradient.

Fix: zero-initialise the wide EmbeddingBag (as TF's linear model does), so the
logit starts near 0 (smaller pre-activations); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = ("Wide & Deep (Google Play, 2016) re-implemented in PyTorch with EmbeddingBag "
          "for the wide crosses; default N(0,1) init of nn.EmbeddingBag, sigmoid + MSE on a rate")


class WideDeep(nn.Module):
    def __init__(self, n_buckets, vocab_sizes, emb_dim, hidden):
        super().__init__()
        self.wide = nn.EmbeddingBag(n_buckets, 1, mode="sum")
        self.embeddings = nn.ModuleList(nn.Embedding(v, emb_dim) for v in vocab_sizes)
        layers, prev = [], emb_dim * len(vocab_sizes)
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.ReLU()]
            prev = h
        layers.append(nn.Linear(prev, 1))
        self.deep = nn.Sequential(*layers)
        self.out_act = nn.Sigmoid()

    def forward(self, cross_ids, cross_offsets, ids):
        wide = self.wide(cross_ids, cross_offsets).squeeze(1)
        e = torch.cat([emb(ids[:, i]) for i, emb in enumerate(self.embeddings)], dim=1)
        return self.out_act(wide + self.deep(e).squeeze(1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(buckets=20000, fields=4, hidden=[64, 32], bs=128, lr=0.5, steps=120, act=(350, 600)),
        dict(buckets=50000, fields=6, hidden=[128], bs=64, lr=0.3, steps=100, act=(400, 700)),
        dict(buckets=30000, fields=3, hidden=[64, 64, 32], bs=256, lr=0.1, steps=140, act=(450, 700)),
    ][seed % 3]
    g = torch.Generator().manual_seed(1212 + seed)
    n, nb, f = 3000, cfg["buckets"], cfg["fields"]
    vocab = [int(v) for v in torch.randint(20, 80, (f,), generator=g)]
    ids = torch.stack([torch.randint(0, v, (n,), generator=g) for v in vocab], dim=1)
    true_w = torch.randn(nb, generator=g) * 0.06
    id_w = [torch.randn(v, generator=g) * 0.6 for v in vocab]
    crosses, logits = [], []
    for r in range(n):
        k = int(torch.randint(cfg["act"][0], cfg["act"][1], (1,), generator=g))
        c = torch.randint(0, nb, (k,), generator=g)
        crosses.append(c)
        logits.append(true_w[c].sum() + sum(id_w[i][ids[r, i]] for i in range(f)))
    logit = torch.stack(logits)
    rate = torch.sigmoid((logit - logit.mean()) / logit.std() * 1.5 + 0.3)
    rate = (rate + 0.05 * torch.randn(n, generator=g)).clamp(0.0, 1.0)

    torch.manual_seed(seed)
    model = WideDeep(nb, vocab, 8, cfg["hidden"])
    if fixed:
        nn.init.zeros_(model.wide.weight)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    loss_fn = nn.MSELoss()
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n, (cfg["bs"],), generator=g).tolist()
        flat = torch.cat([crosses[i] for i in idx])
        offsets = torch.tensor([0] + [len(crosses[i]) for i in idx[:-1]]).cumsum(0)
        batches.append(((flat, offsets, ids[idx]), rate[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
