"""T5-style encoder tagger (RMSNorm pre-norm, no biases, no 1/sqrt(d) attention scale, learned bucketed
relative-position bias, T5 init). Its hparams come from a tensor2tensor / Mesh-TF config where
learning_rate = 1.0 is a constant multiplied by rsqrt_decay (1/sqrt(max(step, 10000)) = 0.01); the port
passes lr=1.0 straight to AdamW. Every weight moves by ~1 per step (median update/weight ratio ~0.4),
the loss explodes and then settles at the tag-prior level for the rest of the run.
fixed=True: the same model and data at the rate the schedule actually gives, lr = 1/sqrt(10000) = 0.01.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Raffel et al. 2020 T5 (relative position buckets, no attention scaling, inverse-sqrt schedule "
          "1/sqrt(max(n, 10^4))); tensor2tensor-style hparams where learning_rate is a constant multiplied by "
          "the schedule, and ports that pass that constant directly to torch.optim.AdamW")

VOCAB, PAD = 400, 0
N_TAGS = 12
SEQ = 32
D, HEADS, D_FF, LAYERS = 64, 4, 128, 2
BUCKETS, MAX_DIST = 32, 64
BATCH = 32


class T5RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def relative_position_bucket(rel, num_buckets=BUCKETS, max_distance=MAX_DIST):
    # bidirectional T5 bucketing: half the buckets per direction, exact for small offsets, log-spaced after
    num_buckets //= 2
    ret = (rel > 0).long() * num_buckets
    n = rel.abs()
    max_exact = num_buckets // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float().clamp_min(1) / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).long()
    large = large.clamp_max(num_buckets - 1)
    return ret + torch.where(is_small, n, large)


class T5Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, D, bias=False)
        self.k = nn.Linear(D, D, bias=False)
        self.v = nn.Linear(D, D, bias=False)
        self.o = nn.Linear(D, D, bias=False)

    def forward(self, x, position_bias, key_mask):
        B, T, _ = x.shape
        q, k, v = (f(x).view(B, T, HEADS, D // HEADS).transpose(1, 2) for f in (self.q, self.k, self.v))
        scores = q @ k.transpose(-1, -2) + position_bias          # T5: no 1/sqrt(d_head) scaling
        scores = scores.masked_fill(~key_mask[:, None, None, :], torch.finfo(scores.dtype).min)
        return self.o((scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D))


class T5Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.attn = T5RMSNorm(D), T5Attention()
        self.norm2 = T5RMSNorm(D)
        self.wi = nn.Linear(D, D_FF, bias=False)
        self.wo = nn.Linear(D_FF, D, bias=False)

    def forward(self, x, position_bias, key_mask):
        x = x + self.attn(self.norm1(x), position_bias, key_mask)
        return x + self.wo(F.relu(self.wi(self.norm2(x))))


class T5Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Embedding(VOCAB, D)
        self.relative_attention_bias = nn.Embedding(BUCKETS, HEADS)
        self.blocks = nn.ModuleList(T5Block() for _ in range(LAYERS))
        self.final_norm = T5RMSNorm(D)
        self.tag_head = nn.Linear(D, N_TAGS)
        pos = torch.arange(SEQ)
        self.register_buffer("buckets", relative_position_bucket(pos[None, :] - pos[:, None]), persistent=False)
        # T5 initialisation (Mesh TF): embeddings N(0,1), q scaled by (d_model * d_kv)^-0.5, others d^-0.5
        nn.init.normal_(self.shared.weight, std=1.0)
        for blk in self.blocks:
            nn.init.normal_(blk.attn.q.weight, std=(D * D // HEADS) ** -0.5)
            for lin in (blk.attn.k, blk.attn.v, blk.attn.o, blk.wi):
                nn.init.normal_(lin.weight, std=D ** -0.5)
            nn.init.normal_(blk.wo.weight, std=D_FF ** -0.5)
        nn.init.normal_(self.tag_head.weight, std=0.02)   # new task head, BERT-style initializer_range
        nn.init.zeros_(self.tag_head.bias)

    def forward(self, ids):
        key_mask = ids != PAD
        bias = self.relative_attention_bias(self.buckets).permute(2, 0, 1)[None]   # [1,H,T,T]
        x = self.shared(ids)
        for blk in self.blocks:
            x = blk(x, bias, key_mask)
        return self.tag_head(self.final_norm(x))


def _make_batches(g, steps):
    # part-of-speech style tagging: every word type has a tag, except a set of ambiguous words whose
    # tag depends on the tag of the word before them (needs attention at relative offset -1).
    word_tag = torch.randperm(VOCAB, generator=g) % N_TAGS        # balanced tag set
    ambiguous = torch.zeros(VOCAB, dtype=torch.bool)
    ambiguous[torch.randperm(VOCAB - 2, generator=g)[:24] + 2] = True
    batches = []
    for _ in range(steps):
        ids = torch.randint(2, VOCAB, (BATCH, SEQ), generator=g)
        lengths = torch.randint(SEQ // 2, SEQ + 1, (BATCH,), generator=g)
        tags = word_tag[ids].clone()
        for t in range(1, SEQ):
            amb = ambiguous[ids[:, t]]
            tags[:, t] = torch.where(amb, (tags[:, t - 1] + 3) % N_TAGS, tags[:, t])
        pad = torch.arange(SEQ)[None, :] >= lengths[:, None]
        batches.append((ids.masked_fill(pad, PAD), tags.masked_fill(pad, -100)))
    return batches


def loss_fn(logits, targets):
    return F.cross_entropy(logits.reshape(-1, N_TAGS), targets.reshape(-1), ignore_index=-100)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps = 200
    model = T5Encoder()
    learning_rate_constant = 1.0                 # from the T2T / Mesh-TF hparams
    rsqrt_factor = 1.0 / math.sqrt(10000)        # rsqrt_decay during its first 10k steps
    lr = learning_rate_constant * rsqrt_factor if fixed else learning_rate_constant
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn,
                batches=_make_batches(g, steps), steps=steps, amp_dtype=None, scaler=None)
