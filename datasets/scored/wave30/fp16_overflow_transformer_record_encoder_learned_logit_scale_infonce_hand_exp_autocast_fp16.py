"""Contrastive entity matcher: a small Transformer record encoder trained with InfoNCE in fp16.

Model: each record (product title / attribute tokens, in arbitrary attribute order) is
embedded, run through a 1-2 layer Transformer encoder (`encoder`), mean-pooled, projected
(`proj`) and L2-normalised. A batch holds pairs of records known to refer to the same entity;
every other record in the batch is a negative. The cosine matrix is multiplied by a learnable
CLIP-style logit scale (initialised at 1 / tau = 10, clamped at 100). Loss: symmetric InfoNCE
written out by hand, -log(exp(l_ii) / sum_j exp(l_ij)), trained under
torch.autocast(float16) with a GradScaler (Adam).

Mechanism: under autocast the logits come out of a matmul in float16, and the hand-written loss
exponentiates them in float16 too (exp is not one of the ops autocast promotes here). exp(x)
overflows float16 above x = 11.09. At the start the scaled cosines are at most ~10 and training
is calm; as the encoder pulls matching records together and the learned scale grows, a positive
pair's logit passes 11.09, exp() returns inf, inf / inf is NaN and the loss is NaN (earlier or
later depending on width, depth and lr). The GradScaler cannot help: it protects the backward
pass against under/overflow, not a forward value that passes 65504.

ORIGIN: None -- the overflow happens in the hand-written loss (a functional exp on the logits),
not inside a module of the model; the float16 matmul that produces the logits is autocast's
choice, not one module's fault.

Fix: run that op in float32 -- cast the logits with .float() before exponentiating (fp16
autocast and the GradScaler stay). Same model, data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ("SimCLR / SimCSE / contrastive entity-alignment code computing "
          "torch.exp(logit_scale * sim) by hand; AMP issues reporting NaN InfoNCE loss once "
          "scaled cosine logits exceed ~11 (exp overflow past 65504 in float16)")


class RecordEncoder(nn.Module):
    def __init__(self, vocab, d, layers, heads):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.proj = nn.Linear(d, d)
        self.logit_scale = nn.Parameter(torch.tensor(2.3026))      # log(1 / 0.1), CLIP-style

    def embed(self, toks):
        return F.normalize(self.proj(self.encoder(self.emb(toks)).mean(1)), dim=-1)

    def forward(self, a, b):
        scale = self.logit_scale.clamp(max=4.6052).exp()             # clamp at 100 like CLIP
        return (self.embed(a) @ self.embed(b).t()) * scale           # scaled cosine logits


def make_infonce(fp32_logits: bool):
    def loss_fn(logits, _unused):
        if fp32_logits:
            logits = logits.float()
        e = torch.exp(logits)
        pos = e.diagonal()
        # symmetric (record a -> b and b -> a), as in CLIP
        return -0.5 * ((pos / e.sum(1)).log().mean() + (pos / e.sum(0)).log().mean())
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    vocab = 500
    d = [48, 32, 48][seed % 3]
    layers = [1, 2, 1][seed % 3]
    heads = [4, 4, 4][seed % 3]
    n_tok = [10, 8, 10][seed % 3]
    batch = [96, 64, 80][seed % 3]
    steps = [150, 160, 150][seed % 3]
    lr = [3e-3, 3e-3, 2e-3][seed % 3]

    n_ent = 1000
    ent_tok = torch.randint(0, vocab, (n_ent, n_tok), generator=g)

    def record(ids):
        t = ent_tok[ids].clone()
        noise = torch.rand(t.shape, generator=g) < 0.3
        t[noise] = torch.randint(0, vocab, (int(noise.sum()),), generator=g)
        perm = torch.argsort(torch.rand(t.shape, generator=g), dim=1)   # attribute order
        return t.gather(1, perm)

    batches = []
    for _ in range(steps):
        ids = torch.randperm(n_ent, generator=g)[:batch]
        batches.append(((record(ids), record(ids)), torch.zeros(batch)))

    model = RecordEncoder(vocab, d, layers, heads)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu")
    return dict(model=model, optimizer=opt, loss_fn=make_infonce(fp32_logits=fixed),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=scaler)
