"""DPO fine-tuning of a tiny byte-level causal LM (RMSNorm + RoPE attention + SwiGLU) against a frozen
reference copy. The per-token log-probabilities of the responses are computed as
``torch.log(torch.softmax(logits, -1).gather(...))`` instead of with a fused ``log_softmax``. DPO
has no floor on the rejected log-likelihood: the policy keeps pushing the probability of the "bad"
bytes that only appear in rejected responses towards zero, the logit gap of those bytes grows past
~90 nats and the float32 softmax probability of that byte drops into the denormal range (or to
exactly 0). The forward loss is still finite and small, but the backward of ``log`` divides by that
probability: 1/p overflows to inf, inf * 0 inside the softmax backward gives NaN gradients, the
AdamW step writes NaN into every policy weight and all later losses are NaN. The run is calm (DPO
loss falls smoothly from log 2) until that moment. Fixed: the same run with ``log_softmax`` +
gather."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "logprob"
SOURCE = ("DPO/RLHF implementations computing sequence log-probs as log(softmax(logits)).gather "
          "(e.g. TRL / OpenRLHF issues about NaN in DPO when rejected log-probs go to -inf); the "
          "known advice is to use log_softmax (fused logsumexp) instead")

V, D, T, H = 40, 32, 14, 4


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, base=10000.0):
    # x: (B, H, T, hd)
    hd = x.shape[-1]
    pos = torch.arange(x.shape[-2], dtype=torch.float32)
    inv = base ** (-torch.arange(0, hd, 2, dtype=torch.float32) / hd)
    ang = pos[:, None] * inv[None]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.o = nn.Linear(D, D, bias=False)

    def forward(self, x):
        B, L, _ = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, H, D // H).permute(2, 0, 3, 1, 4)
        q, k = rope(q), rope(k)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(B, L, D))


class SwiGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(D, hidden, bias=False)
        self.w3 = nn.Linear(D, hidden, bias=False)
        self.w2 = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        nn.init.normal_(self.emb.weight, std=0.3)
        self.n1, self.attn = RMSNorm(D), Attention()
        self.n2, self.mlp = RMSNorm(D), SwiGLU()
        self.nf = RMSNorm(D)
        self.head = nn.Linear(D, V)

    def forward(self, ids):
        x = self.emb(ids)
        x = x + self.attn(self.n1(x))
        x = x + self.mlp(self.n2(x))
        return self.head(self.nf(x))


class SeqLogProb(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.fused = fused

    def forward(self, logits, ids, mask):
        logits, tgt, m = logits[:, :-1], ids[:, 1:], mask[:, 1:]
        if self.fused:
            lp = torch.log_softmax(logits, -1).gather(-1, tgt[..., None]).squeeze(-1)
        else:
            lp = torch.log(torch.softmax(logits, -1).gather(-1, tgt[..., None]).squeeze(-1))
        return (lp * m).sum(-1)


class DPOPair(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.policy = TinyLM()
        self.reference = TinyLM()
        self.reference.load_state_dict(self.policy.state_dict())
        for p in self.reference.parameters():
            p.requires_grad_(False)
        self.logprob = SeqLogProb(fused)

    def forward(self, chosen, rejected, resp_mask):
        pc = self.logprob(self.policy(chosen), chosen, resp_mask)
        pr = self.logprob(self.policy(rejected), rejected, resp_mask)
        with torch.no_grad():
            rc = self.logprob(self.reference(chosen), chosen, resp_mask)
            rr = self.logprob(self.reference(rejected), rejected, resp_mask)
        return {"policy_chosen": pc, "policy_rejected": pr, "ref_chosen": rc, "ref_rejected": rr}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DPOPair(fused=fixed)
    beta = 0.02
    steps, B, P = 120, 16, 5  # P prompt bytes

    def loss_fn(out, y):
        logits = beta * ((out["policy_chosen"] - out["ref_chosen"]) - (out["policy_rejected"] - out["ref_rejected"]))
        return -F.logsigmoid(logits).mean()

    # "good" bytes 0..29, "bad" bytes 30..39 appear only in rejected responses
    pool = []
    for _ in range(24):
        chosen = torch.randint(0, 30, (B, T), generator=g)
        rejected = chosen.clone()
        pos = torch.randint(P, T, (B, 1), generator=g)
        rejected.scatter_(1, pos, torch.randint(30, V, (B, 1), generator=g))
        mask = torch.zeros(B, T)
        mask[:, P:] = 1.0
        pool.append(((chosen, rejected, mask), torch.zeros(B)))
    batches = [pool[i % len(pool)] for i in range(steps)]
    opt = torch.optim.AdamW(model.policy.parameters(), lr=2e-2, weight_decay=0.0)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
