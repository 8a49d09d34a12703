"""lr_too_high: a GRU encoder-decoder with additive (Bahdanau) attention trained at a learning
rate far too high.

Mechanism: a sequence-to-sequence model in the style of PyTorch's "Translation with a Sequence to
Sequence Network and Attention" tutorial (token embeddings, a GRU encoder, a GRUCell decoder fed
its previous target token and the attention context, additive attention
``v^T tanh(W_q s + W_k h_j)``, a linear output layer; teacher forcing, token cross-entropy) learns
a toy transduction: output the source sequence reversed (or reversed with each token shifted by
one, depending on the seed). The optimizer is SGD with momentum 0.9 and the learning rate
copied from PyTorch's word_language_model example (plain SGD, lr 20, or 5-10 in its variants),
which is only stable there because that example has no momentum and clips the gradient norm to
0.25 on every step; here there is no clipping and momentum multiplies the effective step by ten.
A sane lr for this model and loss is 0.2-0.3. The first update already moves the output layer
and the attention/recurrent matrices by amounts comparable to their own norms (update/weight
ratios of 0.1-1, against ~1e-3 in a stable run); the next ones overshoot back and forth, the GRU
gates and the attention tanh saturate, and the output layer's weights grow until the logits are
in the hundreds: within 5-15 steps the cross-entropy jumps from ln V (~2.3) to 50-300 and it never
comes back below its starting value, oscillating as the momentum keeps throwing the weights
past the minimum. The loss stays finite (the saturated GRU bounds the hidden state), so the run
fails by not learning rather than by NaN.
Seeds change the vocabulary, the sequence length, the widths, the batch, the task variant and
the lr (and with it where the run leaves the descent path).

ORIGIN is None: the cause is the optimizer's step size, global to all parameters (the suite's
convention for lr_too_high).
Fixed: the same run with SGD (momentum 0.9) at lr 0.2-0.3.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "PyTorch seq2seq-with-attention tutorial model (Bahdanau et al. 2015 additive attention) "
    "trained with the learning rate of pytorch/examples word_language_model (SGD lr=20, "
    "safe there only with clip 0.25, no momentum): forum reports of 'seq2seq loss explodes to "
    "tens/hundreds and never recovers'; lowering the lr fixes it."
)

BOS = 0


class AdditiveAttention(nn.Module):
    def __init__(self, dec: int, enc: int, att: int) -> None:
        super().__init__()
        self.w_q = nn.Linear(dec, att, bias=False)
        self.w_k = nn.Linear(enc, att)
        self.v = nn.Linear(att, 1, bias=False)

    def forward(self, s: torch.Tensor, keys: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        score = self.v(torch.tanh(self.w_q(s).unsqueeze(1) + proj_keys)).squeeze(-1)  # (B, S)
        alpha = torch.softmax(score, dim=-1)
        return torch.bmm(alpha.unsqueeze(1), keys).squeeze(1)  # (B, H)


class Seq2Seq(nn.Module):
    def __init__(self, vocab: int, emb: int, hidden: int, att: int) -> None:
        super().__init__()
        self.src_emb = nn.Embedding(vocab, emb)
        self.encoder = nn.GRU(emb, hidden, batch_first=True)
        self.tgt_emb = nn.Embedding(vocab, emb)
        self.attn = AdditiveAttention(hidden, hidden, att)
        self.decoder = nn.GRUCell(emb + hidden, hidden)
        self.out = nn.Linear(2 * hidden, vocab)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        keys, h = self.encoder(self.src_emb(src))
        proj_keys = self.attn.w_k(keys)
        s = h[0]
        emb = self.tgt_emb(tgt_in)
        logits = []
        for t in range(tgt_in.shape[1]):
            ctx = self.attn(s, keys, proj_keys)
            s = self.decoder(torch.cat([emb[:, t], ctx], -1), s)
            logits.append(self.out(torch.cat([s, ctx], -1)))
        return torch.stack(logits, 1)  # (B, T, V)


class TokenCE(nn.Module):
    def forward(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    vocab = rng.choice([10, 12, 16])  # token 0 is BOS; content tokens 1..vocab-1
    length = rng.choice([5, 6, 7])
    emb = rng.choice([16, 24])
    hidden = rng.choice([32, 48, 64])
    att = rng.choice([16, 32])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([140, 160, 180])
    shift = rng.choice([0, 1])  # 0: reverse; 1: reverse and map each token to the next one
    bad_lr = rng.choice([5.0, 10.0, 20.0])
    good_lr = rng.choice([0.2, 0.3])

    g = torch.Generator().manual_seed(530_000 + seed)
    batches = []
    for _ in range(steps):
        src = torch.randint(1, vocab, (batch, length), generator=g)
        tgt = src.flip(1)
        if shift:
            tgt = (tgt % (vocab - 1)) + 1
        tgt_in = torch.cat([torch.full((batch, 1), BOS), tgt[:, :-1]], 1)
        batches.append(((src, tgt_in), tgt))

    torch.manual_seed(seed)
    model = Seq2Seq(vocab, emb, hidden, att)
    opt = torch.optim.SGD(model.parameters(), lr=good_lr if fixed else bad_lr, momentum=0.9)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": TokenCE(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
