"""lr_too_high: BERT-style (post-LN) encoder classifier with layer-wise lr decay sign slip.

Mechanism: layer-wise learning-rate decay (LLRD, as in ELECTRA/DeBERTa fine-tuning) should
give layer l (0 = embeddings, L = top encoder layer) lr = base_lr * decay**(L - l), so the
embeddings get the *smallest* lr.  The user wrote decay**(l - L) (exponent sign flipped),
so the lr grows geometrically towards the bottom: with decay 0.45-0.6 and 5-7 layers the
word embeddings get 35-64x base_lr (~0.035-0.065 for AdamW) and the first layers 10-30x.  The embedding table (BERT init,
std 0.02) is rewritten by each step (update/weight ratio ~1), the first post-LN attention
layers see garbage that changes every step, and the classifier loss never improves (it
oscillates around or above ln(n_classes)).

ORIGIN: "embeddings.word_embeddings" - the parameter group with the largest lr, where the
update/weight ratio first explodes.  The top layers and the head get sane lrs.
Fix: decay**(L - l) (the intended LLRD: embeddings get the smallest lr).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = "embeddings.word_embeddings"
SOURCE = ("Layer-wise LR decay for BERT/ELECTRA fine-tuning (Clark et al. 2020; Sun et al. "
          "2019 'How to Fine-Tune BERT for Text Classification'); known pattern: the "
          "decay ** (num_layers - depth) exponent written the other way round")


class Embeddings(nn.Module):
    def __init__(self, vocab, d, ctx):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d, padding_idx=0)
        self.position_embeddings = nn.Embedding(ctx, d)
        self.LayerNorm = nn.LayerNorm(d)

    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        return self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(pos))


class BertClassifier(nn.Module):
    def __init__(self, vocab, d, heads, layers, ctx, n_cls):
        super().__init__()
        self.embeddings = Embeddings(vocab, d, ctx)
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=False)
            for _ in range(layers)])
        self.pooler = nn.Linear(d, d)
        self.classifier = nn.Linear(d, n_cls)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, ids):
        x = self.embeddings(ids)
        pad = ids == 0
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=pad)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


def llrd_param_groups(model, base_lr, decay, fixed):
    L = len(model.layers)
    groups = []

    def lr_for(depth):   # depth 0 = embeddings, L = top layer
        return base_lr * decay ** (L - depth) if fixed else base_lr * decay ** (depth - L)

    groups.append({"params": list(model.embeddings.parameters()), "lr": lr_for(0)})
    for i, layer in enumerate(model.layers):
        groups.append({"params": list(layer.parameters()), "lr": lr_for(i + 1)})
    groups.append({"params": list(model.pooler.parameters()) + list(model.classifier.parameters()),
                   "lr": base_lr})
    return groups


def _data(g, n, T, vocab, n_cls):
    # label = which of n_cls "cue" tokens occurs most often; other tokens are noise
    ids = torch.randint(n_cls + 2, vocab, (n, T), generator=g)
    ids[:, 0] = 1                                   # [CLS]
    y = torch.randint(0, n_cls, (n,), generator=g)
    for i in range(n):
        k = int(torch.randint(3, 6, (1,), generator=g))
        pos = torch.randperm(T - 1, generator=g)[:k] + 1
        ids[i, pos] = y[i] + 2
        other = torch.randint(0, n_cls, (1,), generator=g)
        ids[i, torch.randperm(T - 1, generator=g)[:1] + 1] = other + 2
    return ids, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(vocab=60, d=48, heads=4, layers=6, T=16, n_cls=4, bs=24, steps=80, lr=1e-3, decay=0.5),
           dict(vocab=80, d=32, heads=4, layers=7, T=14, n_cls=3, bs=24, steps=90, lr=1e-3, decay=0.6),
           dict(vocab=50, d=48, heads=2, layers=5, T=18, n_cls=5, bs=32, steps=80, lr=1e-3, decay=0.45)][seed % 3]
    model = BertClassifier(cfg["vocab"], cfg["d"], cfg["heads"], cfg["layers"], cfg["T"], cfg["n_cls"])
    opt = torch.optim.AdamW(llrd_param_groups(model, cfg["lr"], cfg["decay"], fixed),
                            lr=cfg["lr"], weight_decay=0.01)
    bs = cfg["bs"]
    ids, y = _data(g, cfg["steps"] * bs, cfg["T"], cfg["vocab"], cfg["n_cls"])
    batches = [(ids[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=cfg["steps"])
