"""A prefix-LM (UniLM / T5-prefix-LM / PaLI style: bidirectional attention over the prompt,
causal over the response) built from modern decoder parts -- RMSNorm pre-norm, rotary
embeddings, QK-norm (RMSNorm on each head's queries and keys, as in OLMo-2 / Gemma-3), SwiGLU --
fine-tuned SFT-style: the loss is taken on response tokens only, as a hand-written masked mean
`(ce * mask).sum() / mask.sum()`.

Mechanism: the batches come from a length-grouped sampler (HF Trainer's group_by_length idea:
examples of similar length are batched together to save padding). Almost all prompts are
short, but the dataset holds a handful of very long prompts, and the sampler puts them into
one batch. Truncation to the context window keeps only prompt tokens for those examples, so
that batch has no response token at all: mask.sum() == 0 and the loss is 0 / 0 = NaN (and its
gradient NaN), at one step in the middle of an otherwise calm run. Nothing about the model,
optimizer or values is unusual; the division is the unsafe op.

ORIGIN: None -- the NaN is born in the loss reduction, outside the model's modules.

Fix: divide by mask.sum().clamp_min(1) (an empty batch then contributes a zero loss and zero
gradient); same data, model and optimizer.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("HF transformers / TRL reports 'loss is nan when all labels are -100' (SFT with "
          "prompt masking where truncation removed the completion, made worse by "
          "group_by_length batching); masked-mean losses without clamp_min")

PAD, SEP = 0, 1


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class PrefixAttention(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.h, self.hd = n_heads, d // n_heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.q_norm = RMSNorm(self.hd)
        self.k_norm = RMSNorm(self.hd)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin, allowed):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.hd).permute(2, 0, 3, 1, 4)
        q, k = rotate(self.q_norm(q), cos, sin), rotate(self.k_norm(k), cos, sin)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed[:, None])
        return self.o_proj(out.transpose(1, 2).reshape(B, T, D))


class SwiGLU(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.w_gate = nn.Linear(d, f, bias=False)
        self.w_up = nn.Linear(d, f, bias=False)
        self.w_down = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.norm1 = RMSNorm(d)
        self.attn = PrefixAttention(d, n_heads)
        self.norm2 = RMSNorm(d)
        self.ffn = SwiGLU(d, 3 * d)

    def forward(self, x, cos, sin, allowed):
        x = x + self.attn(self.norm1(x), cos, sin, allowed)
        return x + self.ffn(self.norm2(x))


class PrefixLM(nn.Module):
    def __init__(self, vocab, d, n_layers, n_heads, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, n_heads) for _ in range(n_layers)])
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        hd = d // n_heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(max_len).float(), inv)
        ang = torch.cat((ang, ang), -1)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids, prefix_len):
        B, T = ids.shape
        pos = torch.arange(T)
        causal = pos[None, :] <= pos[:, None]                                   # (T, T)
        in_prefix = pos[None, :] < prefix_len[:, None]                          # (B, T) keys
        allowed = causal[None] | in_prefix[:, None, :]                          # (B, T, T)
        x = self.tok(ids)
        for blk in self.blocks:
            x = blk(x, self.cos[:T], self.sin[:T], allowed)
        return self.head(self.norm(x))


def make_example(g, vocab, T, P):
    """prompt p_1..p_P, SEP, response = prompt copied; truncated to T + 1 tokens."""
    prompt = torch.randint(2, vocab, (P,), generator=g)
    seq = torch.cat([prompt, torch.tensor([SEP]), prompt])[: T + 1]
    ids = torch.full((T + 1,), PAD, dtype=torch.long)
    ids[: len(seq)] = seq
    mask = torch.zeros(T, dtype=torch.float32)
    lo, hi = min(P, T), min(2 * P, T)
    mask[lo:hi] = 1.0                    # targets that are response tokens
    return ids[:-1], ids[1:], mask, min(P + 1, T)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab = [24, 32][seed % 2]
    d = [64, 48][(seed // 2) % 2]
    n_layers = [2, 3][seed % 2]
    batch = [16, 12][(seed // 2) % 2]
    lr = [3e-3, 2e-3][seed % 2]
    T = 24
    steps = 260
    long_step = [70, 120, 175, 95][seed % 4]       # where the length-grouped long-prompt batch lands

    batches = []
    for s in range(steps):
        if s == long_step:
            Ps = torch.randint(T + 4, 3 * T, (batch,), generator=g)   # prompts longer than the window
        else:
            Ps = torch.randint(3, 9, (batch,), generator=g)
        ex = [make_example(g, vocab, T, int(P)) for P in Ps]
        ids = torch.stack([e[0] for e in ex])
        tgt = torch.stack([e[1] for e in ex])
        mask = torch.stack([e[2] for e in ex])
        plen = torch.tensor([e[3] for e in ex])
        batches.append(((ids, plen), (tgt, mask)))

    model = PrefixLM(vocab, d, n_layers, 4, T)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)

    def loss_fn(logits, targets):
        tgt, mask = targets
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), reduction="none")
        denom = mask.sum().clamp_min(1.0) if fixed else mask.sum()
        return (ce * mask.reshape(-1)).sum() / denom

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
