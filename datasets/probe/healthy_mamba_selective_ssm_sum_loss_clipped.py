"""Healthy hard negative: a 2-layer Mamba-style selective state-space LM (input-dependent dt, B, C;
causal depthwise conv; gated SiLU output; pre-RMSNorm residual) on a synthetic Markov text source.
It looks alarming: the token loss is summed over all 512 tokens of a batch (~1450 at step 0) and the
raw gradient norm sits at 130-400 on every step -- but grad-norm clipping to 1.0 before each AdamW
step (warmup + cosine lr) keeps the updates sane and the loss falls steadily to the source entropy
(~960 per batch). fixed=True builds the identical run (nothing to fix).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Mamba selective scan (Gu & Dao 2023, reference mamba_simple / mamba-minimal); fairseq-style "
          "sum-reduced token loss; grad-norm clipping to 1.0 before the optimizer step as in HF Trainer / "
          "nanoGPT; warmup+cosine lr")

V, D, E, N, T = 16, 32, 64, 8, 32


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class SelectiveSSM(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(D, 2 * E)
        self.conv = nn.Conv1d(E, E, 4, groups=E, padding=3)
        self.x_proj = nn.Linear(E, 2 * N + 1)           # B_t, C_t, low-rank dt
        self.dt_proj = nn.Linear(1, E)
        with torch.no_grad():                            # dt in [1e-3, 1e-1] as in Mamba's init
            dt = torch.exp(torch.rand(E) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
        self.A_log = nn.Parameter(torch.log(torch.arange(1, N + 1).float()).repeat(E, 1))
        self.Dskip = nn.Parameter(torch.ones(E))
        self.out_proj = nn.Linear(E, D)

    def forward(self, x):
        b, t, _ = x.shape
        u, z = self.in_proj(x).chunk(2, -1)
        u = F.silu(self.conv(u.transpose(1, 2))[..., :t].transpose(1, 2))
        bc = self.x_proj(u)
        Bt, Ct, dt_r = bc[..., :N], bc[..., N:2 * N], bc[..., 2 * N:]
        dt = F.softplus(self.dt_proj(dt_r))              # (b, t, E)
        A = -torch.exp(self.A_log)                        # (E, N)
        h = x.new_zeros(b, E, N)
        ys = []
        for i in range(t):
            dA = torch.exp(dt[:, i, :, None] * A)
            h = dA * h + dt[:, i, :, None] * Bt[:, i, None, :] * u[:, i, :, None]
            ys.append((h * Ct[:, i, None, :]).sum(-1))
        y = torch.stack(ys, 1) + self.Dskip * u
        return self.out_proj(y * F.silu(z))


class MambaLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.norms = nn.ModuleList([RMSNorm(D) for _ in range(2)])
        self.mixers = nn.ModuleList([SelectiveSSM() for _ in range(2)])
        self.norm_f = RMSNorm(D)
        self.lm_head = nn.Linear(D, V)

    def forward(self, tokens):
        h = self.emb(tokens)
        for norm, mixer in zip(self.norms, self.mixers):
            h = h + mixer(norm(h))
        return self.lm_head(self.norm_f(h))


def token_loss_sum(logits, targets):
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="sum")


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, bs = 160, 16
    # order-1 Markov source: each symbol has ~3 likely successors
    logits = torch.randn(V, V, generator=g) * 0.5
    top = torch.rand(V, V, generator=g).argsort(-1)[:, :3]
    logits.scatter_(1, top, 3.0)
    trans = torch.softmax(logits, -1)
    batches = []
    for _ in range(steps):
        seq = torch.empty(bs, T + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, V, (bs,), generator=g)
        for i in range(T):
            seq[:, i + 1] = torch.multinomial(trans[seq[:, i]], 1, generator=g).squeeze(-1)
        batches.append((seq[:, :-1], seq[:, 1:]))
    model = MambaLM()
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=3e-3, weight_decay=0.01, betas=(0.9, 0.95))
    warm = 15
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (s - warm) / (steps - warm))))

    def clip_before_step(optimizer, args, kwargs):
        torch.nn.utils.clip_grad_norm_(params, max_norm=1.0)

    opt.register_step_pre_hook(clip_before_step)
    opt.register_step_post_hook(lambda o, a, k: sched.step())
    return dict(model=model, optimizer=opt, loss_fn=token_loss_sum, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
