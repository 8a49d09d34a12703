"""Mamba-style selective state-space LM whose parallel (cumsum/exp) scan runs in float16.

Architecture: a small Mamba language model: token embedding, a stack of residual Mamba blocks
(RMSNorm -> in_proj to (x, z) -> causal depthwise Conv1d -> SiLU -> x_proj to (dt, B, C) ->
dt_proj + softplus -> selective scan with S4D-real A = -exp(A_log), skip D -> gate by SiLU(z) ->
out_proj), final RMSNorm and a tied LM head.  Trained with AdamW under float16 autocast with a
GradScaler, on a synthetic Markov "language" whose batches are bucketed by length (most buckets
are short, a long bucket shows up now and then, at a seed-dependent step).

Mechanism: the scan is the "parallel" closed form used by several minimal Mamba / gated linear
attention re-implementations instead of a sequential loop:
    S_t = cumsum_{s<=t} delta_s * A          (the log of the accumulated decay, <= 0)
    h_t = exp(S_t) * cumsum_{s<=t} exp(-S_s) * delta_s * B_s * x_s
To save memory it keeps the activations' dtype (A is cast to delta's dtype), so under autocast the
cumsum and exp run in float16.  exp(-S_s) passes 65504 as soon as the accumulated decay exceeds
ln(65504) = 11.09, i.e. after roughly 11 / max(delta * |A|) tokens.  Short buckets stay under it
and training is calm; the first long-bucket batch (or, once training has grown delta, a
20-token batch) makes exp(-S) inf in the first Mamba block, exp(S) * inf gives inf/NaN and the
loss is NaN.  The GradScaler cannot help: the overflow is in the
forward pass.  (The GLA paper, Yang et al. 2023, sec. 4, names exactly this: the 1/B_t factor of
the parallel form overflows, which is why Mamba's selective_scan_fn computes the scan in fp32 and
chunked kernels work in log space.)  In float32 the same closed form only overflows beyond an
accumulated decay of 88, far past the longest bucket here.

ORIGIN: `layers.0.mixer.ssm`, the module that holds the scan (A_log, D) of the first block, where
exp(-S) first passes 65504.

fixed=True: the scan runs in float32 (autocast disabled around it and its inputs upcast, as
Mamba's selective_scan_fn does); everything else, float16 autocast of the rest and the
GradScaler included, is unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "layers.0.mixer.ssm"
SOURCE = ("Mamba (Gu & Dao 2023) selective SSM with a naive parallel cumsum/exp scan kept in "
          "half precision; GLA paper (Yang et al. 2023) sec. 4 on exp(-cumsum) overflow of the "
          "parallel form; Mamba README advice to keep the SSM in fp32")


class SelectiveScan(nn.Module):
    """Holds A_log and D; computes y = SSM(x) for given delta, B, C."""

    def __init__(self, d_inner, d_state, fp32):
        super().__init__()
        A = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))            # S4D-real init
        self.D = nn.Parameter(torch.ones(d_inner))
        self.fp32 = fp32

    def _scan(self, x, delta, B, C):
        A = -torch.exp(self.A_log).to(delta.dtype)         # keep the activation dtype
        dA = delta.unsqueeze(-1) * A                        # (b, l, d, n)
        dBx = (delta * x).unsqueeze(-1) * B.unsqueeze(2)    # (b, l, d, n)
        S = torch.cumsum(dA, dim=1)
        h = torch.exp(S) * torch.cumsum(torch.exp(-S) * dBx, dim=1)
        y = (h * C.unsqueeze(2)).sum(-1)
        return y + x * self.D.to(x.dtype)

    def forward(self, x, delta, B, C):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._scan(x.float(), delta.float(), B.float(), C.float())
        return self._scan(x, delta, B, C)


class MambaMixer(nn.Module):
    def __init__(self, d_model, d_state, fp32, expand=2, d_conv=4, dt_min=1e-3, dt_max=0.05):
        super().__init__()
        d_inner = expand * d_model
        self.dt_rank = max(1, math.ceil(d_model / 16))
        self.d_state = d_state
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        self.conv1d = nn.Conv1d(d_inner, d_inner, d_conv, groups=d_inner, padding=d_conv - 1)
        self.act = nn.SiLU()
        self.x_proj = nn.Linear(d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, d_inner)
        dt = torch.exp(torch.rand(d_inner) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
        with torch.no_grad():                               # Mamba's dt bias init (inverse softplus)
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
            nn.init.uniform_(self.dt_proj.weight, -self.dt_rank ** -0.5, self.dt_rank ** -0.5)
        self.ssm = SelectiveScan(d_inner, d_state, fp32)
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)

    def forward(self, h):
        L = h.shape[1]
        x, z = self.in_proj(h).chunk(2, dim=-1)
        x = self.act(self.conv1d(x.transpose(1, 2))[..., :L].transpose(1, 2))
        dt, B, C = self.x_proj(x).split([self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        y = self.ssm(x, delta, B, C)
        return self.out_proj(y * self.act(z))


class MambaBlock(nn.Module):
    def __init__(self, d_model, d_state, fp32):
        super().__init__()
        self.norm = nn.RMSNorm(d_model)
        self.mixer = MambaMixer(d_model, d_state, fp32)

    def forward(self, h):
        return h + self.mixer(self.norm(h))


class MambaLM(nn.Module):
    def __init__(self, vocab, d_model, n_layers, d_state, fp32):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([MambaBlock(d_model, d_state, fp32) for _ in range(n_layers)])
        self.norm_f = nn.RMSNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.lm_head.weight = self.embedding.weight
        nn.init.normal_(self.embedding.weight, std=0.1)

    def forward(self, ids):
        h = self.embedding(ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(self.norm_f(h))


def _lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def _make_batches(g, steps, bs, vocab, first_long, short_lens, long_len):
    # a sparse Markov chain: each token has 3 likely successors
    succ = torch.randint(0, vocab, (vocab, 3), generator=g)
    probs = torch.tensor([0.6, 0.3, 0.1])
    batches = []
    for step in range(steps):
        long = step == first_long or (step > first_long and torch.rand((), generator=g) < 0.15)
        L = long_len if long else short_lens[int(torch.randint(0, len(short_lens), (), generator=g))]
        seq = torch.empty(bs, L + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, vocab, (bs,), generator=g)
        for t in range(L):
            pick = torch.multinomial(probs, bs, replacement=True, generator=g)
            seq[:, t + 1] = succ[seq[:, t], pick]
        batches.append((seq[:, :-1], seq[:, 1:]))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    vocab = 32
    d_model = (32, 24, 32)[seed % 3]
    n_layers = (2, 2, 3)[seed % 3]
    first_long = (30, 55, 45)[seed % 3]
    steps = first_long + 50
    long_len = (64, 56, 72)[seed % 3]
    model = MambaLM(vocab, d_model, n_layers, d_state=8, fp32=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    batches = _make_batches(g, steps, 8, vocab, first_long, (12, 16, 20), long_len)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 12)
    return dict(model=model, optimizer=opt, loss_fn=_lm_loss, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
