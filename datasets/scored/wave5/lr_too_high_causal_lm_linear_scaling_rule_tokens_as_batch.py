"""A small causal (post-LN) Transformer language model is trained with AdamW on sequences
from a sparse Markov "grammar" (3 likely successors per token, uniform unigram law). The
learning rate is derived with the linear scaling rule lr = base_lr * batch / ref_batch, copied
from a recipe whose base_lr = 1e-3 was tuned for 8 *sequences* per batch. The training script,
however, plugs in the number of *tokens* in the batch (16 x 48 = 768) instead of the number of
sequences (16), so the Adam step is ~50x too large (about 0.1 instead of 2e-3). Every update
throws the attention/FFN weights and the LM head around, the model never gets below the
unigram loss log(V) (it ends at or slightly above where it started) and nothing becomes NaN.
The fix only changes the batch quantity used in the scaling rule (sequences, not tokens),
which lowers the lr.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Goyal et al. 2017 linear-scaling rule misapplied to tokens instead of sequences; "
          "pattern seen in HF forum threads 'loss stuck at ~log(vocab) after scaling lr with batch size'")

V, T, B, D = 40, 48, 16, 48


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, nhead=4, dim_feedforward=96, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.lm_head = nn.Linear(D, V)
        nn.init.normal_(self.lm_head.weight, std=0.02)
        nn.init.zeros_(self.lm_head.bias)
        self.register_buffer("causal", torch.triu(torch.full((T, T), float("-inf")), 1))

    def forward(self, ids):
        t = ids.shape[1]
        h = self.tok(ids) + self.pos(torch.arange(t))
        h = self.encoder(h, mask=self.causal[:t, :t], is_causal=True)
        return self.lm_head(h)


def _markov_data(g, n_batches):
    # sparse transition table: each token has 3 plausible successors
    # (built from permutations, so every token has in-degree 3 and the unigram law is uniform)
    succ = torch.stack([torch.randperm(V, generator=g) for _ in range(3)], 1)
    probs = torch.tensor([0.6, 0.3, 0.1])
    batches = []
    for _ in range(n_batches):
        seq = torch.empty(B, T + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, V, (B,), generator=g)
        for t in range(T):
            choice = torch.multinomial(probs.expand(B, 3), 1, generator=g).squeeze(1)
            seq[:, t + 1] = succ[seq[:, t], choice]
        batches.append((seq[:, :-1].contiguous(), seq[:, 1:].contiguous()))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TinyCausalLM()
    steps = 150
    data = _markov_data(g, 30)
    batches = [data[i % len(data)] for i in range(steps)]

    base_lr, ref_batch = 1e-3, 8
    tokens_per_batch = B * T
    batch_for_scaling = B if fixed else tokens_per_batch   # root cause: tokens used as "batch"
    lr = base_lr * batch_for_scaling / ref_batch
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
