"""A GPT-J / PaLM-style decoder (parallel attention + MLP sub-blocks off one pre-norm, ALiBi
position biases instead of position embeddings, SwiGLU, untied head) whose `_init_weights`
zero-initialises every nn.Linear.

Mechanism: the author meant the well-known "zero-init the residual output projections" trick
(zero `o_proj` / `down_proj` so each block starts as the identity; the input projections stay
random and their gradients make the output projections grow at once). The init loop, however,
matches on `isinstance(module, nn.Linear)` and zeroes q/k/v, gate/up as well. With every weight
of a block at exactly zero the block is a fixed point of gradient descent: q = k = v = 0 and
gate = up = 0 give a zero output, the gradient of o_proj is (attention output)^T g = 0, that of
down_proj is (SwiGLU hidden)^T g = 0, and the gradients that would reach v/q/k and gate/up pass
back through the zero o_proj/down_proj (silu(0) * 0 kills the gate/up product on both sides).
AdamW with weight decay keeps them at zero forever: every block contributes nothing from step 0
in every layer. Only the token embedding (nn.Embedding is not an nn.Linear) and the lm_head train,
so the network is a bigram model. The data is a lag-2 process (token t copies a fixed permutation
of token t-2 most of the time; token t-1 carries no information about it), so a bigram model
is no better than the untrained one and the loss stays at ~ln(V) for the whole run.

ORIGIN: "layers.0" -- every projection of every block starts at zero at once; the first block
(where the residual stream first fails to receive any contribution) is named.

Fix: normal(0, 0.02) init for all linears, with only o_proj and down_proj zeroed (the intended
recipe); same model, optimizer and data.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Zero-init-residual-projection recipes (GPT-NeoX/modded-nanoGPT zero c_proj, ReZero, "
          "'Fixup'); the recurring bug of an _init_weights that applies nn.init.zeros_ to every "
          "nn.Linear, giving zero gradients (symmetric/zero init never breaks)")


def alibi_slopes(n_heads):
    start = 2 ** (-8.0 / n_heads)
    return torch.tensor([start ** (i + 1) for i in range(n_heads)])


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class ALiBiAttention(nn.Module):
    def __init__(self, d, n_heads, max_len):
        super().__init__()
        self.h, self.hd = n_heads, d // n_heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        pos = torch.arange(max_len)
        dist = (pos[None, :] - pos[:, None]).clamp(max=0).float()  # -(i - j) for j <= i
        bias = alibi_slopes(n_heads)[:, None, None] * dist[None]
        bias = bias.masked_fill(torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), 1), float("-inf"))
        self.register_buffer("bias", bias, persistent=False)

    def forward(self, x):
        B, T, D = x.shape
        q = self.q_proj(x).view(B, T, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.h, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.h, self.hd).transpose(1, 2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd) + self.bias[:, :T, :T]
        out = att.softmax(-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, T, D))


class SwiGLU(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class ParallelBlock(nn.Module):
    """x + attn(ln(x)) + mlp(ln(x)) -- GPT-J / PaLM parallel formulation."""

    def __init__(self, d, n_heads, max_len):
        super().__init__()
        self.ln = RMSNorm(d)
        self.attn = ALiBiAttention(d, n_heads, max_len)
        self.mlp = SwiGLU(d, 2 * d)

    def forward(self, x):
        h = self.ln(x)
        return x + self.attn(h) + self.mlp(h)


class ParallelDecoder(nn.Module):
    def __init__(self, vocab, d, n_layers, n_heads, max_len, intended_init):
        super().__init__()
        self.intended_init = intended_init
        self.wte = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([ParallelBlock(d, n_heads, max_len) for _ in range(n_layers)])
        self.ln_f = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)
        elif isinstance(module, nn.Linear):
            if self.intended_init:
                nn.init.normal_(module.weight, std=0.02)
            else:
                nn.init.zeros_(module.weight)  # meant for the residual output projections only
        if self.intended_init:
            for name, sub in module.named_children():
                if name in ("o_proj", "down_proj"):
                    nn.init.zeros_(sub.weight)

    def forward(self, idx):
        x = self.wte(idx)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.ln_f(x))


def lag2_corpus(g, vocab, n_seq, T, keep):
    perm = torch.randperm(vocab, generator=g)
    seq = torch.randint(0, vocab, (n_seq, T + 1), generator=g)
    for t in range(2, T + 1):
        copy = torch.rand(n_seq, generator=g) < keep
        seq[:, t] = torch.where(copy, perm[seq[:, t - 2]], seq[:, t])
    return seq


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab = [16, 24, 32][seed % 3]
    d = [64, 48, 96][seed % 3]
    n_layers = [2, 3, 4][(seed // 2) % 3]
    n_heads = 4
    batch = [16, 24][seed % 2]
    keep = [0.85, 0.8, 0.9][(seed // 3) % 3]
    lr = [2e-3, 3e-3][seed % 2]
    T = 32
    steps = 200

    model = ParallelDecoder(vocab, d, n_layers, n_heads, T, intended_init=fixed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)

    seq = lag2_corpus(g, vocab, steps * batch, T, keep)
    batches = [(seq[i * batch:(i + 1) * batch, :-1].contiguous(), seq[i * batch:(i + 1) * batch, 1:].contiguous())
               for i in range(steps)]

    def loss_fn(logits, targets):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
