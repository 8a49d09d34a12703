"""ALBERT-style masked-LM encoder (factorised embeddings, one transformer layer shared across
depth) trained with a hand-written LAMB optimizer. LAMB rescales each tensor's Adam step to
lr * ||w||, so lr *is* the per-step relative weight change; the run copies a large-batch LAMB
learning rate (0.08-0.12) onto a 32-sequence batch. Every step moves every tensor by ~10% of its
norm: the MLM loss never leaves chance level, and because steps scale with ||w|| the norms
compound until attention logits overflow (non-finite loss in most seeds, a flat stall otherwise).
fixed=True: the same LAMB with a small-batch learning rate (1e-2).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("LAMB (You et al., ICLR 2020 'Large Batch Optimization for Deep Learning') as "
          "re-implemented in NVIDIA/ALBERT pretraining code; ALBERT (Lan et al., 2020) shared "
          "layers; large-batch LAMB lr reused at small batch -> per-layer trust ratio steps too big.")

V, T, E, D, H, DEPTH = 48, 16, 32, 48, 4, 3
BATCH, STEPS, MASK_ID = 32, 200, V


class Lamb(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["m"] = torch.zeros_like(p)
                    st["v"] = torch.zeros_like(p)
                st["step"] += 1
                m, v = st["m"], st["v"]
                m.mul_(b1).add_(p.grad, alpha=1 - b1)
                v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                mh = m / (1 - b1 ** st["step"])
                vh = v / (1 - b2 ** st["step"])
                upd = mh / (vh.sqrt() + group["eps"])
                if group["weight_decay"]:
                    upd.add_(p, alpha=group["weight_decay"])
                w_norm, u_norm = p.norm(), upd.norm()
                trust = torch.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm,
                                    torch.ones_like(w_norm))
                p.add_(upd, alpha=-group["lr"] * float(trust))


class SharedLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(D, H, batch_first=True)
        self.ln1 = nn.LayerNorm(D)
        self.ff = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
        self.ln2 = nn.LayerNorm(D)

    def forward(self, x):
        x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln2(x + self.ff(x))


class Albert(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V + 1, E)
        self.pos = nn.Embedding(T, E)
        self.proj = nn.Linear(E, D)
        self.layer = SharedLayer()
        self.head = nn.Sequential(nn.Linear(D, E), nn.GELU(), nn.LayerNorm(E))
        self.out = nn.Linear(E, V)

    def forward(self, ids):
        x = self.proj(self.tok(ids) + self.pos.weight[: ids.shape[1]])
        for _ in range(DEPTH):
            x = self.layer(x)
        return self.out(self.head(x))


def mlm_loss(logits, target):
    return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=-100)


def _corpus(g):
    # uniform unigram statistics; tokens are predictable only from context:
    # x[t+1] = perm[x[t]] with 10% random resets
    perm = torch.randperm(V, generator=g)
    seqs = torch.empty(BATCH * STEPS, T, dtype=torch.long)
    cur = torch.randint(0, V, (BATCH * STEPS,), generator=g)
    for t in range(T):
        seqs[:, t] = cur
        reset = torch.rand(cur.shape, generator=g) < 0.1
        cur = torch.where(reset, torch.randint(0, V, cur.shape, generator=g), perm[cur])
    return seqs


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    seqs = _corpus(g)
    batches = []
    for s in range(STEPS):
        ids = seqs[s * BATCH:(s + 1) * BATCH].clone()
        mask = torch.rand(ids.shape, generator=g) < 0.2
        target = torch.where(mask, ids, torch.full_like(ids, -100))
        ids[mask] = MASK_ID
        batches.append((ids, target))
    model = Albert()
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "ln" not in n]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2 or "ln" in n]
    lr = 1e-2 if fixed else 0.08 + 0.02 * (seed % 3)
    optimizer = Lamb([{"params": decay, "weight_decay": 0.01},
                      {"params": no_decay, "weight_decay": 0.0}], lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=mlm_loss, batches=batches,
                steps=STEPS, amp_dtype=None, scaler=None)
