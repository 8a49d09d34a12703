"""CLIP-style contrastive image-text pre-training (Radford et al. 2021), miniature.

Image encoder: a small ViT (conv patch embedding, class token, pre-LN Transformer, final LN,
linear projection).  Text encoder: token + position embeddings, causal pre-LN Transformer, final LN,
features taken at the end-of-text token and linearly projected.  Both embeddings are
L2-normalised, multiplied by the learnable ``logit_scale`` (init log(1/0.07)) and trained with
the symmetric in-batch cross-entropy, AdamW.

Mechanism: the learning rate was set with the linear scaling rule from the paper's recipe
(5e-4 at batch 32k) times the number of data-parallel workers, and the 2k-step warmup was
dropped because "the run is short": AdamW starts at 3e-2..4e-2 on a Transformer.  The first updates
move every weight by ~lr (update/weight ratios ~1e-1 instead of ~1e-3): attention and projection
weights overshoot, both towers collapse towards input-independent embeddings and the logit
scale is thrown around, so the contrastive loss goes back up to ~log(batch) and stays there
(or diverges).

ORIGIN: None -- the too-large step size affects every parameter; no single module is the origin.

Fix: a Transformer-appropriate AdamW learning rate (1e-3 here); everything else identical.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("CLIP (Radford et al. 2021) / open_clip training recipes: lr scaled with global batch "
          "plus warmup; open_clip issues on loss stuck at log(batch) / NaN with too-high lr and "
          "no warmup")


class ViT(nn.Module):
    def __init__(self, d, layers, patch, img, out_dim):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        n = (img // patch) ** 2
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n + 1, d))
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d)
        self.proj = nn.Linear(d, out_dim, bias=False)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        return self.proj(self.ln(self.blocks(x))[:, 0])


class TextTransformer(nn.Module):
    def __init__(self, vocab, d, layers, ctx, out_dim):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(0.01 * torch.randn(1, ctx, d))
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d)
        self.proj = nn.Linear(d, out_dim, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((ctx, ctx), float("-inf")), 1))

    def forward(self, ids):
        x = self.tok(ids) + self.pos[:, : ids.shape[1]]
        x = self.ln(self.blocks(x, mask=self.mask[: ids.shape[1], : ids.shape[1]]))
        return self.proj(x[:, -1])                      # EOT token is the last position


class CLIP(nn.Module):
    def __init__(self, vocab, d, layers, ctx):
        super().__init__()
        self.visual = ViT(d, layers, 4, 16, 32)
        self.text = TextTransformer(vocab, d, layers, ctx, 32)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, images, ids):
        im = F.normalize(self.visual(images), dim=-1)
        tx = F.normalize(self.text(ids), dim=-1)
        return self.logit_scale.exp() * im @ tx.t()


def clip_loss(logits, target):
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=48, layers=2, lr=3e-2, bs=32, steps=100),
           dict(d=64, layers=2, lr=3e-2, bs=24, steps=90),
           dict(d=32, layers=3, lr=4e-2, bs=40, steps=110)][seed % 3]
    lr = 1e-3 if fixed else cfg["lr"]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(123 + seed)
    n_col, n_shape, ctx = 8, 8, 6
    vocab = 2 + n_col + n_shape + 10          # bos/eot, colour words, shape words, fillers
    col_rgb = torch.randn(n_col, 3, 1, 1, generator=g)
    shape_tpl = torch.randn(n_shape, 1, 16, 16, generator=g)

    model = CLIP(vocab, cfg["d"], cfg["layers"], ctx)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1, betas=(0.9, 0.98), eps=1e-6)

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        c = torch.randint(0, n_col, (bs,), generator=g)
        s = torch.randint(0, n_shape, (bs,), generator=g)
        img = col_rgb[c] * (1 + shape_tpl[s]) + 0.3 * torch.randn(bs, 3, 16, 16, generator=g)
        ids = torch.randint(2 + n_col + n_shape, vocab, (bs, ctx), generator=g)
        ids[:, 0] = 0                                            # <bos>
        swap = torch.rand(bs, generator=g) < 0.5                 # "a red square" / "square, red"
        ids[:, 2] = torch.where(swap, 2 + n_col + s, 2 + c)
        ids[:, 3] = torch.where(swap, 2 + c, 2 + n_col + s)
        ids[:, -1] = 1                                           # <eot>
        batches.append(((img, ids), torch.arange(bs)))
    return dict(model=model, optimizer=opt, loss_fn=clip_loss, batches=batches, steps=cfg["steps"])
