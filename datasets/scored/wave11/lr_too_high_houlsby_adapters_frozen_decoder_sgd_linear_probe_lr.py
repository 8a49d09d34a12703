"""Parameter-efficient fine-tuning of a frozen byte-level decoder (token embeddings, two pre-RMSNorm
blocks with sliding-window attention and SwiGLU) with Houlsby bottleneck adapters after every
attention and FFN sub-layer plus a new classification head; only adapters and head train. The
optimiser settings were carried over from the linear-probe run on the same backbone (SGD, momentum
0.9, lr = 1.0; linear-evaluation protocols such as MoCo's use lr 1-30 because a single linear layer
on frozen, normalised features tolerates it). With adapters inside the residual stream and an
unnormalised head, lr = 1.0 makes each update as large as the weights themselves (update/weight
ratio ~1 instead of ~1e-3): after the first two steps the logits overshoot, the loss jumps from 1.4
to 10-60 nats and then bounces around there for the rest of the run without ever coming back down.
No NaN and no inf: a loss that grows and wanders. Fixed: the same run with lr = 0.1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("linear-probe SGD recipes with very large lr (MoCo linear eval lr=30, momentum 0.9) reused for "
          "adapter tuning (Houlsby et al. 2019 use 1e-4..1e-3); forum reports of PEFT loss going up "
          "with an lr copied across recipes")

V, D, T, NH, WIN, C = 32, 32, 24, 4, 8, 4


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SlidingWindowAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.out = nn.Linear(D, D, bias=False)
        i = torch.arange(T)
        self.register_buffer("mask", (i[None] <= i[:, None]) & (i[:, None] - i[None] < WIN), persistent=False)

    def forward(self, x):
        B, S, _ = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, NH, D // NH).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask[:S, :S])
        return self.out(y.transpose(1, 2).reshape(B, S, D))


class SwiGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(D, hidden, bias=False)
        self.w3 = nn.Linear(D, hidden, bias=False)
        self.w2 = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Adapter(nn.Module):
    def __init__(self, r=8):
        super().__init__()
        self.down = nn.Linear(D, r)
        self.up = nn.Linear(r, D)
        nn.init.zeros_(self.up.weight)
        nn.init.zeros_(self.up.bias)

    def forward(self, x):
        return x + self.up(F.gelu(self.down(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.attn, self.adapter1 = RMSNorm(D), SlidingWindowAttention(), Adapter()
        self.norm2, self.ffn, self.adapter2 = RMSNorm(D), SwiGLU(), Adapter()

    def forward(self, x):
        x = x + self.adapter1(self.attn(self.norm1(x)))
        return x + self.adapter2(self.ffn(self.norm2(x)))


class AdaptedClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.blocks = nn.ModuleList(Block() for _ in range(2))
        self.norm = RMSNorm(D)
        self.head = nn.Linear(D, C)

    def forward(self, ids):
        x = self.embed(ids)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x).mean(1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = AdaptedClassifier()
    trainable = []
    for name, p in model.named_parameters():
        train = "adapter" in name or name.startswith("head")
        p.requires_grad_(train)
        if train:
            trainable.append(p)
    steps, B = 120, 32
    motifs = torch.randint(0, V, (C, 3), generator=g)

    def batch():
        ids = torch.randint(0, V, (B, T), generator=g)
        y = torch.randint(0, C, (B,), generator=g)
        for r in range(B):
            for _ in range(2):
                p = int(torch.randint(0, T - 3, (1,), generator=g))
                ids[r, p:p + 3] = motifs[y[r]]
        return ids, y

    batches = [batch() for _ in range(steps)]
    opt = torch.optim.SGD(trainable, lr=0.1 if fixed else 1.0, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
