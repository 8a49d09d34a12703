"""Pre-LN transformer classifier with hand-written attention (q @ k^T / sqrt(d), then
.exp() normalised by hand, no max-subtraction) trained with AdamW at a learning rate
far too high for Adam. Adam moves every q/k weight by ~lr per step, so attention logits
grow steadily while the loss still falls; mid-run a logit passes ~88, exp() overflows to
inf and inf/inf gives NaN (attention-logit growth, Wortsman et al. 2023).
fixed=True: only the AdamW learning rate is lowered to a sane value.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Attention logit growth instability: Wortsman et al. 2023 'Small-scale proxies for "
          "large-scale Transformer training instabilities' (lr sweep, no qk-layernorm) and "
          "Dehghani et al. 2023 ViT-22B; naive exp-softmax attention as in many hand-written "
          "minimal-transformer tutorials")

N_NOISE = 8       # filler tokens 0..7
N_CLASSES = 8     # one "signal" token 8..15 is hidden in each sequence; it is the label
VOCAB = N_NOISE + N_CLASSES
SEQ = 16


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        w = scores.exp()                      # hand-written softmax, no max subtraction
        w = w / w.sum(-1, keepdim=True)
        out = (w @ v).transpose(1, 2).reshape(B, T, D)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    def __init__(self, d=32, heads=2, layers=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Parameter(torch.randn(SEQ + 1, d) * 0.02)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, N_CLASSES)

    def forward(self, tokens):
        B = tokens.shape[0]
        x = torch.cat([self.cls.expand(B, -1, -1), self.tok(tokens)], 1) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x[:, 0]))


def _batch(g, B):
    toks = torch.randint(0, N_NOISE, (B, SEQ), generator=g)
    pos = torch.randint(0, SEQ, (B,), generator=g)
    y = torch.randint(0, N_CLASSES, (B,), generator=g)
    toks[torch.arange(B), pos] = N_NOISE + y
    return toks, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = TinyTransformer()
    steps = 300
    batches = [_batch(g, 32) for _ in range(steps)]
    lr = 3e-3 if fixed else 2.5e-2
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
