"""Quality-weighted causal-LM pretraining of a tiny pre-LN GPT: each document carries a data-quality
weight in [0, 1] (classifier probability) and the loss is mean(w * token_nll).

Mechanism: one shard was exported with the raw quality-classifier score (hundreds to tens of
thousands) instead of the calibrated probability. When that batch arrives the weighted loss is
~1e4 times larger, momentum-SGD takes a giant step, the weights blow up and the loss goes
non-finite (or the model is destroyed). The data before it is fine and the run was calm.
ORIGIN: None (a corrupt batch, not a module).
Fix: the corrupt batch is filtered out (replaced by a correctly weighted one).
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "quality/importance-weighted LM pretraining (DoReMi/classifier-filtered data) with a shard carrying raw unnormalised scores instead of probabilities"

class GPT(nn.Module):
    def __init__(s, V, d, L, T):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.pos = nn.Embedding(T, d)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True, norm_first=True, activation="gelu")
        s.blocks = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.ln_f = nn.LayerNorm(d); s.head = nn.Linear(d, V, bias=False); s.head.weight = s.tok.weight
        nn.init.normal_(s.tok.weight, std=0.02); nn.init.normal_(s.pos.weight, std=0.02)
    def forward(s, x):
        T = x.shape[1]
        h = s.tok(x) + s.pos(torch.arange(T))
        h = s.blocks(h, mask=nn.Transformer.generate_square_subsequent_mask(T), is_causal=True)
        return s.head(s.ln_f(h))

def build(seed: int, fixed: bool = False) -> dict:
    L, d, lr, B, bad = [(2, 48, 0.1, 16, 40), (3, 32, 0.08, 12, 55), (2, 64, 0.1, 8, 70)][seed % 3]
    torch.manual_seed(seed)
    V, T, steps = 40, 24, 110
    model = GPT(V, d, L, T)
    g = torch.Generator().manual_seed(500 + seed)
    nxt = torch.randint(0, V, (V, 2), generator=g)
    batches = []
    for i in range(steps):
        s = torch.empty(B, T + 1, dtype=torch.long); s[:, 0] = torch.randint(0, V, (B,), generator=g)
        for t in range(T):
            s[:, t + 1] = nxt[s[:, t], torch.randint(0, 2, (B,), generator=g)]
        w = torch.rand(B, generator=g) * 0.8 + 0.2
        raw = torch.rand(B, generator=g) * 4e4 + 500.0
        if i == bad and not fixed:
            w = raw                                   # shard exported with raw scores
        batches.append((s[:, :-1], (s[:, 1:], w)))
    def loss_fn(out, y):
        tgt, w = y
        nll = F.cross_entropy(out.reshape(-1, V), tgt.reshape(-1), reduction="none").view(tgt.shape)
        return (w[:, None] * nll).mean()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
