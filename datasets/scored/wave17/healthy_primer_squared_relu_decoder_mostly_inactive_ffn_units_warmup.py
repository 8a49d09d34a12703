"""Healthy: Primer-style causal decoder (squared-ReLU FFN, pre-LN, tied embeddings) trained with
AdamW, linear warmup + cosine decay (LambdaLR stepped from an optimizer step post-hook).

Looks alarming: the FFN activation relu(x)^2 outputs exact zeros for well over half of the units
on every token (and the fraction of inactive units grows during training, with the fc1 bias
initialised slightly negative for sparsity), gradients through those units are exactly 0, and the
loss barely moves during the warmup steps. Nothing is wrong: the inactive set changes from token
to token, no unit is dead for all inputs, the residual stream carries the signal and the loss
falls steadily once warmup is over.
ORIGIN: None.
"""
import math, torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "healthy"
ORIGIN = None
SOURCE = "Primer (So et al. 2021) squared-ReLU feed-forward; activation sparsity in ReLU^2 LMs; warmup + cosine schedule"

class SqReLU(nn.Module):
    def forward(s, x): return F.relu(x).square()

class Block(nn.Module):
    def __init__(s, d):
        super().__init__()
        s.ln1 = nn.LayerNorm(d); s.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        s.ln2 = nn.LayerNorm(d); s.fc1 = nn.Linear(d, 4 * d); s.act = SqReLU(); s.fc2 = nn.Linear(4 * d, d)
        nn.init.constant_(s.fc1.bias, -0.1)
    def forward(s, x, mask):
        h = s.ln1(x); x = x + s.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + s.fc2(s.act(s.fc1(s.ln2(x))))

class Primer(nn.Module):
    def __init__(s, V, d, L, T):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.pos = nn.Embedding(T, d)
        s.blocks = nn.ModuleList([Block(d) for _ in range(L)])
        s.ln_f = nn.LayerNorm(d); s.head = nn.Linear(d, V, bias=False); s.head.weight = s.tok.weight
        nn.init.normal_(s.tok.weight, std=0.02); nn.init.normal_(s.pos.weight, std=0.02)
    def forward(s, x):
        T = x.shape[1]; mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        h = s.tok(x) + s.pos(torch.arange(T))
        for b in s.blocks: h = b(h, mask)
        return s.head(s.ln_f(h))

def build(seed: int, fixed: bool = False) -> dict:
    L, d, lr, B, warm = [(2, 32, 3e-3, 16, 20), (3, 48, 2e-3, 12, 30), (1, 64, 3e-3, 24, 15)][seed % 3]
    torch.manual_seed(seed)
    V, T, steps = 48, 24, 120
    model = Primer(V, d, L, T)
    g = torch.Generator().manual_seed(808 + seed)
    nxt = torch.randint(0, V, (V, 2), generator=g)
    batches = []
    for _ in range(steps):
        s = torch.empty(B, T + 1, dtype=torch.long); s[:, 0] = torch.randint(0, V, (B,), generator=g)
        for t in range(T):
            s[:, t + 1] = nxt[s[:, t], torch.randint(0, 2, (B,), generator=g)]
        batches.append((s[:, :-1], s[:, 1:]))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1, betas=(0.9, 0.95))
    f = lambda i: (i + 1) / warm if i < warm else 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (i - warm) / (steps - warm)))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, f)
    opt.register_step_post_hook(lambda *_: sched.step())
    loss_fn = lambda out, y: F.cross_entropy(out.reshape(-1, V), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
