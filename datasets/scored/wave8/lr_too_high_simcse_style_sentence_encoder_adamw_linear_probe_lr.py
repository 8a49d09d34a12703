"""A small Transformer sentence encoder (token + position embeddings, two post-LN encoder
layers, masked mean pooling, linear projection, L2-normalised embeddings) is trained on
paraphrase pairs with the in-batch-negatives InfoNCE loss at temperature 0.05, SimCSE-style.
The learning rate comes from the linear-probe stage of the same project (AdamW lr=5e-2, where only
a final linear layer was trained). For the full encoder that step size is two orders of magnitude
too large: every weight moves by ~lr per step, the attention and FFN weights (~0.1 in size)
are rewritten each step, LayerNorm keeps the activations finite, and the pooled embeddings
collapse towards a common direction, so the loss sits at ~log(batch) without ever turning
non-finite. The fix lowers the learning rate to 5e-4; nothing else changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("SimCSE (Gao et al. 2021) / sentence-transformers MultipleNegativesRankingLoss use "
          "lr 1e-5..5e-5 for the encoder; reports of contrastive loss stuck at log(batch_size) "
          "(representation collapse) when a probe/head learning rate is reused for the encoder.")

V, T, D, B = 200, 16, 32, 32


class SentenceEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D, padding_idx=0)
        self.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, nhead=4, dim_feedforward=64, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.proj = nn.Linear(D, D)

    def embed(self, ids):
        pad = ids.eq(0)
        h = self.tok(ids) + self.pos.weight[: ids.shape[1]]
        h = self.encoder(h, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        h = (h * keep).sum(1) / keep.sum(1)
        return F.normalize(self.proj(h), dim=-1)

    def forward(self, a, b):
        return self.embed(a) @ self.embed(b).t() / 0.05


def paraphrase(g, base):
    out = base.clone()
    n = int((base > 0).sum())
    sub = torch.rand(n, generator=g) < 0.25
    out[:n][sub] = torch.randint(1, V, (int(sub.sum()),), generator=g)
    perm = torch.randperm(n, generator=g)
    return out[:n][perm].tolist() + [0] * (T - n)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SentenceEncoder()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4 if fixed else 5e-2, weight_decay=0.01)
    steps = 120
    batches = []
    for s in range(steps):
        a_rows, b_rows = [], []
        for _ in range(B):
            n = int(torch.randint(8, T + 1, (1,), generator=g))
            base = torch.zeros(T, dtype=torch.long)
            base[:n] = torch.randint(1, V, (n,), generator=g)
            a_rows.append(paraphrase(g, base))
            b_rows.append(paraphrase(g, base))
        a, b = torch.tensor(a_rows), torch.tensor(b_rows)
        batches.append(((a, b), torch.arange(B)))

    def loss_fn(out, y):
        return F.cross_entropy(out, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
