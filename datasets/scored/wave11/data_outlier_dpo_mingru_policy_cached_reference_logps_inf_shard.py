"""Offline DPO of a tiny byte-level language model whose token mixer is a minGRU (sigmoid update gate,
linear recurrence) followed by an RMSNorm + SwiGLU block. To save compute the reference model's
sequence log-probabilities were pre-computed once and cached next to the preference pairs (as TRL's
``precompute_ref_log_probs`` does). One cache shard was written by an fp16 inference job whose
log-softmax overflowed, so for the pairs in that shard both cached reference log-probs are
``-inf``. When that batch arrives (step 37) the DPO logit is beta*((pc+inf)-(pr+inf)) = NaN, the
loss is NaN, AdamW writes NaN into every weight and the run never recovers. Everything else (model,
optimiser, the other 39 batches) is ordinary. Fixed: the same run with the pairs whose cached
reference log-probs are non-finite filtered out of that batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("DPO with precomputed reference log-probs (TRL precompute_ref_log_probs) where a cached "
          "shard from fp16 inference contains -inf log-probs; reports of 'DPO loss nan' traced to "
          "corrupt/overflowed reference log-probs")

V, D, T = 48, 32, 16


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MinGRU(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.to_z = nn.Linear(d, d)
        self.to_h = nn.Linear(d, d)
        self.out = nn.Linear(d, d, bias=False)

    def forward(self, x):
        z = torch.sigmoid(self.to_z(x))
        hh = self.to_h(x)
        h = torch.zeros_like(x[:, 0])
        hs = []
        for t in range(x.shape[1]):
            h = (1 - z[:, t]) * h + z[:, t] * hh[:, t]
            hs.append(h)
        return self.out(torch.stack(hs, 1))


class SwiGLU(nn.Module):
    def __init__(self, d, hidden=64):
        super().__init__()
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class MinGRULM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        nn.init.normal_(self.embed.weight, std=0.5)
        self.norm1, self.mixer = RMSNorm(D), MinGRU(D)
        self.norm2, self.ffn = RMSNorm(D), SwiGLU(D)
        self.norm_f = RMSNorm(D)
        self.lm_head = nn.Linear(D, V, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        x = x + self.mixer(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return self.lm_head(self.norm_f(x))

    def seq_logp(self, ids, mask):
        lp = torch.log_softmax(self(ids)[:, :-1], -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        return (lp * mask[:, 1:]).sum(-1)


class DPOPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lm = MinGRULM()

    def forward(self, chosen, rejected, mask):
        return self.lm.seq_logp(chosen, mask), self.lm.seq_logp(rejected, mask)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DPOPolicy()
    beta = 0.1
    steps, B, P = 40, 16, 6

    def loss_fn(out, ref):
        pc, pr = out
        logits = beta * ((pc - ref["chosen"]) - (pr - ref["rejected"]))
        return -F.logsigmoid(logits).mean()

    shards = []
    for i in range(steps):
        chosen = torch.randint(0, 40, (B, T), generator=g)
        rejected = chosen.clone()
        pos = torch.randint(P, T, (B, 2), generator=g)
        rejected.scatter_(1, pos, torch.randint(40, V, (B, 2), generator=g))
        mask = torch.zeros(B, T)
        mask[:, P:] = 1.0
        with torch.no_grad():
            rc, rr = model(chosen, rejected, mask)
        shards.append([(chosen, rejected, mask), {"chosen": rc.clone(), "rejected": rr.clone()}])
    # shard 37 comes from the broken fp16 cache job: three pairs have -inf reference log-probs
    bad = 37
    rows = torch.randperm(B, generator=g)[:3]
    shards[bad][1]["chosen"][rows] = float("-inf")
    shards[bad][1]["rejected"][rows] = float("-inf")
    if fixed:  # drop the pairs whose cached reference log-probs are not finite
        (c, r, m), ref = shards[bad]
        keep = torch.isfinite(ref["chosen"]) & torch.isfinite(ref["rejected"])
        shards[bad] = [(c[keep], r[keep], m[keep]), {k: v[keep] for k, v in ref.items()}]
    batches = [tuple(s) for s in shards]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
