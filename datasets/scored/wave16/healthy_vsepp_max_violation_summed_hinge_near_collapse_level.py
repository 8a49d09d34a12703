"""VSE++ image-caption retrieval (Faghri et al. 2018) with max-violation (hardest negative) loss.

Image side: pre-extracted CNN features -> linear projection; caption side: word embeddings -> GRU,
last hidden state; both L2-normalised into a joint space, cosine similarity scores.  The loss is
VSE++'s max-violation contrastive hinge, summed over the batch in both directions:
    sum_i [ max_j (m + s(i, c_j) - s(i, c_i))_+  +  max_j (m + s(c_i, j) - s(c_i, i))_+ ]

Why it looks alarming but is healthy: the loss is a *sum* over the batch (tens, not ~1), it is
very noisy because each term depends on a single hardest negative, and for a long stretch it
hovers around 2*m*B -- exactly the value a fully collapsed embedding (all similarities equal)
would give, so it is easy to read as representation collapse.  In fact the image projection and
the GRU are aligning colour and object words with the image features; as the hardest negatives
stop violating the margin the summed loss keeps falling well below 2*m*B.  Nothing needs fixing.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("VSE++: Improving Visual-Semantic Embeddings with Hard Negatives (Faghri et al., BMVC "
          "2018), fartashf/vsepp max_violation loss; reported initial plateau of the MH loss")


class VSEPP(nn.Module):
    def __init__(self, feat_dim, vocab, d):
        super().__init__()
        self.img_enc = nn.Linear(feat_dim, d)
        self.embed = nn.Embedding(vocab, 32)
        self.gru = nn.GRU(32, d, batch_first=True)

    def forward(self, feats, caps):
        im = F.normalize(self.img_enc(feats), dim=-1)
        _, h = self.gru(self.embed(caps))
        tx = F.normalize(h[-1], dim=-1)
        return im @ tx.t()


def max_violation_loss(scores, _target, margin=0.2):
    diag = scores.diag()
    eye = torch.eye(scores.shape[0], dtype=torch.bool)
    cost_c = (margin + scores - diag[:, None]).clamp_min(0).masked_fill(eye, 0)
    cost_i = (margin + scores - diag[None, :]).clamp_min(0).masked_fill(eye, 0)
    return cost_c.max(1).values.sum() + cost_i.max(0).values.sum()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=64, lr=2e-3, bs=32, steps=120),
           dict(d=96, lr=1.5e-3, bs=24, steps=130),
           dict(d=48, lr=3e-3, bs=40, steps=110)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1313 + seed)
    n_col, n_obj, feat_dim, L = 6, 8, 64, 6
    vocab = 2 + n_col + n_obj + 12
    col_f = torch.randn(n_col, feat_dim, generator=g)
    obj_f = torch.randn(n_obj, feat_dim, generator=g)

    model = VSEPP(feat_dim, vocab, cfg["d"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        c = torch.randint(0, n_col, (bs,), generator=g)
        o = torch.randint(0, n_obj, (bs,), generator=g)
        feats = col_f[c] + obj_f[o] + 0.5 * torch.randn(bs, feat_dim, generator=g)
        caps = torch.randint(2 + n_col + n_obj, vocab, (bs, L), generator=g)   # filler words
        pos = torch.randint(0, L - 1, (bs,), generator=g)
        caps[torch.arange(bs), pos] = 2 + c
        caps[torch.arange(bs), pos + 1] = 2 + n_col + o
        batches.append(((feats, caps), torch.arange(bs)))
    return dict(model=model, optimizer=opt, loss_fn=max_violation_loss, batches=batches,
                steps=cfg["steps"])
