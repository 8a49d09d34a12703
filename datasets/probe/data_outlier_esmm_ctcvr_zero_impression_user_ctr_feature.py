"""ESMM (Entire Space Multi-task Model, Ma et al., SIGIR 2018) for post-click
conversion: shared embeddings, a CTR tower and a CVR tower, trained on
BCE(pCTR, click) + BCE(pCTR * pCVR, click & conversion).  Besides the sparse
id fields the model takes a few dense features, one of them the user's
historical CTR computed upstream as clicks / impressions.

Mechanism: a daily feature job writes rows for brand-new users whose
impression count is 0, and the ratio 0/0 is stored as NaN (no fillna).  All
other batches are clean and training is calm; the first batch that contains
such a row puts a NaN into the shared first Linear, pCTR/pCVR become NaN, the
loss is NaN and the backward pass poisons every weight, so every later step is
NaN as well.  Which step hits the corrupt shard differs per seed.

ORIGIN is None: the corruption is in the data, not in any module.

Fix: clean the feature (fill the 0/0 historical CTR with 0, the value used for
cold users everywhere else); same model, same batches otherwise.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("ESMM (Alibaba) CTR/CVR multi-task training; NaN ratio features from "
          "clicks/impressions for zero-impression cold users, a classic feature-pipeline bug")


class Tower(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        layers, prev = [], d_in
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.ReLU()]
            prev = h
        layers.append(nn.Linear(prev, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(1)


class ESMM(nn.Module):
    def __init__(self, vocab_sizes, n_dense, emb_dim, hidden):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(v, emb_dim) for v in vocab_sizes)
        d_in = len(vocab_sizes) * emb_dim + n_dense
        self.ctr = Tower(d_in, hidden)
        self.cvr = Tower(d_in, hidden)

    def forward(self, ids, dense):
        e = torch.cat([emb(ids[:, i]) for i, emb in enumerate(self.embeddings)], dim=1)
        h = torch.cat([e, dense], dim=1)
        p_ctr = torch.sigmoid(self.ctr(h))
        p_cvr = torch.sigmoid(self.cvr(h))
        return torch.stack([p_ctr, p_ctr * p_cvr], dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(fields=5, hidden=[64, 32], bs=128, lr=3e-3, steps=90, bad_step=37, bad_rows=3),
        dict(fields=7, hidden=[128, 64, 32], bs=256, lr=1e-3, steps=80, bad_step=58, bad_rows=1),
        dict(fields=4, hidden=[48], bs=128, lr=5e-3, steps=110, bad_step=21, bad_rows=6),
    ][seed % 3]
    g = torch.Generator().manual_seed(4242 + seed)
    f = cfg["fields"]
    vocab = [int(v) for v in torch.randint(8, 60, (f,), generator=g)]
    n = 6000
    ids = torch.stack([torch.randint(0, v, (n,), generator=g) for v in vocab], dim=1)
    impressions = torch.randint(1, 400, (n,), generator=g).float()
    hist_ctr = torch.rand(n, generator=g) * 0.2
    clicks = (hist_ctr * impressions).round()
    price = torch.randn(n, generator=g)
    dwell = torch.randn(n, generator=g)
    w_click = [torch.randn(v, generator=g) for v in vocab]
    w_conv = [torch.randn(v, generator=g) for v in vocab]
    lc = sum(w_click[i][ids[:, i]] for i in range(f)) * 1.8 + 10.0 * (clicks / impressions - 0.1) - 1.0
    lv = sum(w_conv[i][ids[:, i]] for i in range(f)) * 1.8 - 1.5 * price + 1.0
    click = torch.bernoulli(torch.sigmoid(lc), generator=g)
    conv = torch.bernoulli(torch.sigmoid(lv), generator=g) * click
    y = torch.stack([click, conv], dim=1)

    def dense_of(c, imp):
        ratio = c / imp                                   # 0/0 -> NaN for cold users
        if fixed:
            ratio = torch.nan_to_num(ratio, nan=0.0)
        return torch.stack([(ratio - 0.1) * 10.0, torch.log1p(imp) / 6.0 - 0.7, price_b, dwell_b], dim=1)

    torch.manual_seed(seed)
    model = ESMM(vocab, 4, 8, cfg["hidden"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    def loss_fn(out, target):
        # probability-space BCE on pCTR and pCTCVR (pCTCVR is a product, no logit exists)
        p = out.clamp(1e-7, 1.0 - 1e-7)
        ll = target * torch.log(p) + (1.0 - target) * torch.log1p(-p)
        return -ll.mean(0).sum()

    batches = []
    for step in range(cfg["steps"]):
        idx = torch.randint(0, n, (cfg["bs"],), generator=g)
        c, imp = clicks[idx].clone(), impressions[idx].clone()
        price_b, dwell_b = price[idx], dwell[idx]
        if step == cfg["bad_step"]:                        # cold-user rows from the new shard
            c[: cfg["bad_rows"]] = 0.0
            imp[: cfg["bad_rows"]] = 0.0
        batches.append(((ids[idx], dense_of(c, imp)), y[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
