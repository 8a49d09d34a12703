"""Healthy: fp16 encoder-decoder with GradScaler, label smoothing and clip-inside-step.

A small post-norm encoder-decoder (nn.Transformer) learns a token-substitution "translation"
(each source token maps to a fixed target token, output order reversed) with teacher
forcing.  Things that look alarming but are normal here: it runs under fp16 autocast with a
GradScaler (loss scale 65536, so the raw .grad values inside the scaler are ~6e4 times the
true ones until unscaled); the loss uses label_smoothing=0.1, so it can never approach 0
(its floor is ~0.5 nats) and decreases slowly and steadily rather than collapsing; a
warmup + inverse-sqrt LambdaLR and gradient-norm clipping live inside the optimizer's
step() (the scaler unscales before calling it, so the clipping sees true gradients, and a
skipped step would not advance the schedule).  The run trains normally.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP recipe (GradScaler skipped steps at start; unscale_ before clipping) + "
          "fairseq label_smoothed_cross_entropy + inverse_sqrt warmup schedule")

V, L, BOS = 16, 8, 1


class Translator(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.src_emb = nn.Embedding(V, d)
        self.tgt_emb = nn.Embedding(V, d)
        self.pos = nn.Parameter(torch.randn(L, d) * 0.1)
        self.transformer = nn.Transformer(d, 4, 1, 1, dim_feedforward=64, dropout=0.0,
                                          batch_first=True)
        self.out = nn.Linear(d, V)
        self.register_buffer("causal", torch.triu(torch.full((L, L), float("-inf")), 1))

    def forward(self, src, tgt_in):
        h = self.transformer(self.src_emb(src) + self.pos, self.tgt_emb(tgt_in) + self.pos,
                             tgt_mask=self.causal)
        return self.out(h)


class ClippedScheduledAdam(torch.optim.Adam):
    def setup(self, model, lr_lambda, max_norm):
        self.clip_params, self.max_norm = list(model.parameters()), max_norm
        self.sched = torch.optim.lr_scheduler.LambdaLR(self, lr_lambda)

    def step(self, closure=None):
        torch.nn.utils.clip_grad_norm_(self.clip_params, self.max_norm)
        out = super().step(closure)
        self.sched.step()
        return out


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Translator()
    mapping = torch.randperm(V - 2, generator=g) + 2
    steps, bs, warmup = 150, 32, 15
    batches = []
    for _ in range(steps):
        src = torch.randint(2, V, (bs, L), generator=g)
        tgt = mapping[src - 2].flip(1)
        tgt_in = torch.cat([torch.full((bs, 1), BOS), tgt[:, :-1]], 1)
        batches.append(((src, tgt_in), tgt))
    opt = ClippedScheduledAdam(model.parameters(), lr=3e-3, betas=(0.9, 0.98))
    opt.setup(model, lambda s: min((s + 1) / warmup, math.sqrt(warmup / (s + 1))), 1.0)

    def loss_fn(logits, tgt):
        return F.cross_entropy(logits.float().reshape(-1, V), tgt.reshape(-1),
                               label_smoothing=0.1)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=torch.amp.GradScaler("cpu"))
