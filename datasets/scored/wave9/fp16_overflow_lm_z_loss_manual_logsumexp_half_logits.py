"""Small n-gram-window MLP language model trained under float16 autocast with the PaLM auxiliary
z-loss (1e-4 * log(Z)^2, which keeps the softmax normaliser near 1). The z-loss was hand-written
as torch.log(torch.exp(logits).sum(-1)) on the LM head's output, which under autocast is a
float16 tensor; exp, sum and log are not autocast ops, so they run in half precision. At init the
logits are small, but within the first few to twenty Adam steps (lr 1e-2, a near-deterministic
token grammar) the head grows confident faster than the z-loss can pull log(Z) back, some top
logits pass ~11.1, exp(logit) exceeds 65504, Z becomes inf, the loss is inf and the backward
pass fills the weights with NaN. No GradScaler could help: the
overflow is in the forward pass. Fixed: the z-loss is computed from logits.float() (fp32 for the
op), nothing else changed."""
import torch, torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "lm_head"
SOURCE = ("PaLM (Chowdhery et al. 2022) z-loss; reports of 'loss becomes inf with fp16 and z_loss' where "
          "logsumexp/exp of half-precision logits overflows past 65504")

V, E, CTX, H, B = 64, 32, 3, 128, 64


class WindowLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.mlp = nn.Sequential(nn.Linear(CTX * E, H), nn.GELU(), nn.Linear(H, H), nn.GELU())
        self.lm_head = nn.Linear(H, V)

    def forward(self, ctx_ids):
        return self.lm_head(self.mlp(self.embed(ctx_ids).flatten(1)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 17)
    model = WindowLM()
    table = torch.randint(0, V, (V, V), generator=g)        # next token = f(last two tokens)
    n = 40000
    seq = torch.empty(n, dtype=torch.long)
    seq[:2] = torch.randint(0, V, (2,), generator=g)
    noise = torch.rand(n, generator=g) < 0.02
    rnd = torch.randint(0, V, (n,), generator=g)
    for i in range(2, n):
        seq[i] = rnd[i] if noise[i] else table[seq[i - 2], seq[i - 1]]
    steps = 250
    batches = []
    for _ in range(steps):
        pos = torch.randint(CTX, n, (B,), generator=g)
        ctx = torch.stack([seq[pos - CTX + k] for k in range(CTX)], 1)
        batches.append((ctx, seq[pos]))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    def loss_fn(logits, y):
        ce = nn.functional.cross_entropy(logits, y)
        lg = logits.float() if fixed else logits
        log_z = torch.log(torch.exp(lg).sum(-1))
        return ce + 1e-4 * (log_z.float() ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
