"""Tiny pre-LN GPT (learned positions, tied embeddings) adapted with LP-FT (Kumar et al. 2022):
stage 1 trains only the LM head/embeddings with momentum SGD at a linear-probe lr (1-2); stage 2
(this run) unfreezes the whole network for full fine-tuning, but the user forgot to lower the lr
and keeps the probe lr for every transformer weight.

Mechanism: with momentum SGD at lr 1-2 the updates of the attention and FFN weights are as large
as the weights themselves; the residual stream and logits blow up within ~10-20 steps and the
loss becomes non-finite.
ORIGIN: None (a global optimiser setting, no single module).
Fix: the full-fine-tuning lr (0.1).
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "LP-FT (linear probe then fine-tune, Kumar et al. 2022) with the probe-stage SGD lr kept for the full fine-tuning stage"

class GPT(nn.Module):
    def __init__(s, V, d, L, T):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.pos = nn.Embedding(T, d)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True, norm_first=True, activation="gelu")
        s.blocks = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.ln_f = nn.LayerNorm(d); s.lm_head = nn.Linear(d, V, bias=False); s.lm_head.weight = s.tok.weight
        nn.init.normal_(s.tok.weight, std=0.02); nn.init.normal_(s.pos.weight, std=0.02)
    def forward(s, x):
        T = x.shape[1]
        h = s.blocks(s.tok(x) + s.pos(torch.arange(T)), mask=nn.Transformer.generate_square_subsequent_mask(T), is_causal=True)
        return s.lm_head(s.ln_f(h))

def build(seed: int, fixed: bool = False) -> dict:
    L, d, lr, B = [(2, 48, 1.5, 16), (3, 32, 2.0, 12), (4, 64, 1.0, 8)][seed % 3]
    torch.manual_seed(seed)
    V, T, steps = 48, 24, 100
    model = GPT(V, d, L, T)
    g = torch.Generator().manual_seed(11 + seed)
    zipf = 1.0 / torch.arange(1, V + 1).float()
    nxt = torch.multinomial(zipf.expand(V, V), 2, generator=g)      # Zipfian successors
    batches = []
    for _ in range(steps):
        s = torch.empty(B, T + 1, dtype=torch.long); s[:, 0] = torch.randint(0, V, (B,), generator=g)
        for t in range(T):
            s[:, t + 1] = nxt[s[:, t], torch.randint(0, 2, (B,), generator=g)]
        batches.append((s[:, :-1], s[:, 1:]))
    opt = torch.optim.SGD(model.parameters(), lr=0.1 if fixed else lr, momentum=0.9)
    loss_fn = lambda out, y: F.cross_entropy(out.reshape(-1, V), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
