"""Small decoder-only Transformer (GPT-style: token + learned position embeddings, pre-LN causal
self-attention blocks, AdamW) as a character-level autoregressive model, with Gemma-style final
logit soft-capping.

Mechanism: soft-capping should be cap * tanh(logits / cap) with cap = 30 (a no-op for ordinary
logits). The user wrote tanh(logits * cap) / cap: the tanh input is 30x the logit, so tanh sits at
+-1 for almost every logit (derivative ~0) and the output logits are confined to +-1/30. The
softmax stays essentially uniform, gradients through the cap vanish and the cross-entropy stays at
~ln(V) for the whole run. ORIGIN: the soft-cap module (softcap) whose tanh saturates.
Fix: cap * tanh(logits / cap).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "softcap"
SOURCE = "Gemma-2 final logit soft-capping (cap * tanh(x / cap)) re-implemented with the scale inverted"

TEXT = ("once upon a time there was a little robot who liked to count stars. every night it counted "
        "one more star than the night before, and every morning it forgot the number again. ") * 20


class SoftCap(nn.Module):
    def __init__(self, cap, correct):
        super().__init__()
        self.cap, self.correct = cap, correct

    def forward(self, x):
        if self.correct:
            return self.cap * torch.tanh(x / self.cap)
        return torch.tanh(x * self.cap) / self.cap


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class CharGPT(nn.Module):
    def __init__(self, v, d, depth, heads, T, correct):
        super().__init__()
        self.tok = nn.Embedding(v, d)
        self.pos = nn.Embedding(T, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(depth)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, v, bias=False)
        self.softcap = SoftCap(30.0, correct)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T))
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        for b in self.blocks:
            x = b(x, mask)
        return self.softcap(self.head(self.ln_f(x)))


def build(seed, fixed=False):
    cfg = [dict(d=64, depth=2, heads=4, lr=3e-3, bs=16, T=32), dict(d=48, depth=3, heads=4, lr=2e-3, bs=24, T=24), dict(d=96, depth=1, heads=4, lr=3e-3, bs=12, T=48)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab = sorted(set(TEXT))
    ids = torch.tensor([vocab.index(c) for c in TEXT])
    model = CharGPT(len(vocab), cfg["d"], cfg["depth"], cfg["heads"], cfg["T"], correct=fixed)
    steps = 100
    batches = []
    for _ in range(steps):
        st = torch.randint(0, len(ids) - cfg["T"] - 1, (cfg["bs"],), generator=g)
        seq = torch.stack([ids[s: s + cfg["T"] + 1] for s in st.tolist()])
        batches.append((seq[:, :-1], seq[:, 1:]))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.1)
    loss_fn = lambda logits, y: F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
