"""A small modern decoder-only LM: RMSNorm pre-norm blocks, rotary embeddings, grouped-query
attention (4 query heads sharing 2 or 1 key/value heads), SwiGLU MLP, and the output head tied
to the token embedding, trained with AdamW on a second-order Markov "language" (the next token
depends on the previous two, so unigram and bigram statistics are only weakly informative).

Mechanism: the training script was switched from SGD with momentum to AdamW but kept the SGD
learning rate (a few tenths), with no warmup. Adam's update is ~lr per weight whatever the
gradient's size, so every step moves each 0.02-scale weight by many times its own size
(update/weight ratios >> 1 instead of ~1e-3). The tied embedding/head matrix is hit twice per
step (as input and as output), the residual stream and attention logits jump around, attention
and the MLPs never settle on the context statistics, and the model falls back to predicting
(roughly) the marginal distribution: after the first steps the loss sits near ln(V), the level
of the untrained model, for the rest of the run. Nothing in the data, init or numerics is wrong.

ORIGIN: None -- the optimizer's step size is global; every layer is over-updated at once.

Fix: AdamW at lr 3e-3 (a standard LM learning rate at this size); same model, init and data.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("The common 'switched SGD to Adam(W) and kept lr=0.1-0.5, loss stuck at ln(vocab)' "
          "forum report; Wortsman et al. 2023, 'Small-scale proxies for large-scale Transformer "
          "training instabilities' (small LMs diverge or collapse at high AdamW lr)")


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class GQAttention(nn.Module):
    def __init__(self, d, n_heads, n_kv_heads):
        super().__init__()
        self.h, self.kvh, self.hd = n_heads, n_kv_heads, d // n_heads
        self.q_proj = nn.Linear(d, n_heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d, n_kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, n_kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(n_heads * self.hd, d, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.kvh, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.kvh, self.hd).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        rep = self.h // self.kvh
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(B, T, self.h * self.hd))


class SwiGLU(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, d, n_heads, n_kv_heads):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = GQAttention(d, n_heads, n_kv_heads)
        self.post_attention_layernorm = RMSNorm(d)
        self.mlp = SwiGLU(d, 3 * d)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class GQADecoder(nn.Module):
    def __init__(self, vocab, d, n_layers, n_heads, n_kv_heads, max_len):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([DecoderLayer(d, n_heads, n_kv_heads) for _ in range(n_layers)])
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        hd = d // n_heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(max_len).float(), inv)
        ang = torch.cat((ang, ang), dim=-1)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
        for name, p in self.named_parameters():
            if name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * n_layers))
        self.lm_head.weight = self.embed_tokens.weight  # tied head

    def forward(self, idx):
        T = idx.shape[1]
        x = self.embed_tokens(idx)
        for layer in self.layers:
            x = layer(x, self.cos[:T], self.sin[:T])
        return self.lm_head(self.norm(x))


def markov2_corpus(g, vocab, n_seq, T, branch):
    """Second-order Markov chain: each (a, b) context has `branch` successors, the first likely."""
    succ = torch.randint(0, vocab, (vocab, vocab, branch), generator=g)
    probs = torch.tensor([0.7] + [0.3 / (branch - 1)] * (branch - 1))
    seq = torch.empty(n_seq, T + 1, dtype=torch.long)
    seq[:, :2] = torch.randint(0, vocab, (n_seq, 2), generator=g)
    for t in range(2, T + 1):
        choice = torch.multinomial(probs.expand(n_seq, branch), 1, generator=g).squeeze(1)
        seq[:, t] = succ[seq[:, t - 2], seq[:, t - 1], choice]
    return seq


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab = [16, 20, 24][seed % 3]
    d = [64, 48][seed % 2]
    n_layers = [2, 3][(seed // 2) % 2]
    n_kv_heads = [2, 1][(seed // 3) % 2]
    batch = [16, 24][(seed + 1) % 2]
    T = 32
    steps = 200
    bad_lr = [0.5, 0.4, 0.8][seed % 3]
    lr = 3e-3 if fixed else bad_lr

    model = GQADecoder(vocab, d, n_layers, 4, n_kv_heads, T)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)

    seq = markov2_corpus(g, vocab, steps * batch, T, branch=2)
    batches = [(seq[i * batch:(i + 1) * batch, :-1].contiguous(), seq[i * batch:(i + 1) * batch, 1:].contiguous())
               for i in range(steps)]

    def loss_fn(logits, targets):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
