"""LogBERT masked-log-key transformer trained with AdamW lr=3e-2..5e-2 and no warmup.

Mechanism: LogBERT (Guo et al. 2021) trains a BERT-style encoder on normal log-key
sequences with a masked log-key prediction (MLKP) objective; anomalies are sequences whose
masked keys are poorly predicted. The user copied lr=3e-2..5e-2 from an LSTM/fastText-era script
into this post-LN Transformer encoder and has no warmup. The first AdamW steps move every
weight by ~lr -- update/weight ratios of 1e-1 .. 1e0 for the attention and FFN
matrices -- the attention logits blow up and saturate into near one-hot patterns, the
LayerNorm'd residual stream is dominated by the broken updates, and the model falls back to
predicting the marginal key distribution: the masked-key cross-entropy stalls at the unigram
entropy (or above it) for the rest of the run instead of dropping towards the workflow's
conditional entropy.

ORIGIN: None: every layer receives oversized updates; no single module starts it.

Fix: lr=2e-3 (a sane AdamW lr for an encoder this small), everything else identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Guo, Yuan & Wu 2021 'LogBERT: log anomaly detection via BERT' (masked log key "
          "prediction, transformer encoder); LSTM-era lr (3e-2..5e-2) reused for a transformer "
          "without warmup -> loss stuck at the unigram entropy")


class LogBERT(nn.Module):
    def __init__(self, n_keys, d_model, heads, layers, max_len):
        super().__init__()
        self.tok = nn.Embedding(n_keys + 2, d_model)  # + [MASK], [DIST]
        self.pos = nn.Embedding(max_len + 1, d_model)
        enc_layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                               dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc_layer, layers, enable_nested_tensor=False)
        self.mlkp = nn.Linear(d_model, n_keys)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        return self.mlkp(self.encoder(self.tok(ids) + self.pos(pos)))


def mlkp_loss(logits, labels):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                           ignore_index=-100)


def _automaton(g, n_keys):
    succ = torch.zeros(n_keys, n_keys)
    for k in range(n_keys):
        nxt = torch.randperm(n_keys, generator=g)[:2]
        succ[k, nxt[0]] = 0.95
        succ[k, nxt[1]] = 0.05
    return succ


def _batch(g, succ, n, L, n_keys, p_mask):
    seqs = torch.zeros(n, L, dtype=torch.long)
    k = torch.randint(0, n_keys, (n,), generator=g)
    for t in range(L):
        seqs[:, t] = k
        k = torch.multinomial(succ[k], 1, generator=g).squeeze(1)
    mask = torch.rand(n, L, generator=g) < p_mask
    mask[:, 0] |= ~mask.any(dim=1)
    ids = seqs.masked_fill(mask, n_keys)          # [MASK]
    dist = torch.full((n, 1), n_keys + 1)          # [DIST] token in front
    labels = seqs.masked_fill(~mask, -100)
    ignore = torch.full((n, 1), -100)
    return torch.cat([dist, ids], 1), torch.cat([ignore, labels], 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(12000 + seed)
    cfg = [
        dict(n_keys=30, d=64, heads=4, layers=2, L=24, bs=32, lr=5e-2, steps=150),
        dict(n_keys=48, d=48, heads=4, layers=3, L=20, bs=48, lr=3e-2, steps=140),
        dict(n_keys=24, d=32, heads=2, layers=2, L=32, bs=24, lr=3e-2, steps=160),
    ][seed % 3]
    succ = _automaton(g, cfg["n_keys"])
    model = LogBERT(cfg["n_keys"], cfg["d"], cfg["heads"], cfg["layers"], cfg["L"])
    batches = [_batch(g, succ, cfg["bs"], cfg["L"], cfg["n_keys"], 0.15)
               for _ in range(cfg["steps"])]
    lr = 2e-3 if fixed else cfg["lr"]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=optimizer, loss_fn=mlkp_loss, batches=batches,
                steps=cfg["steps"])
