"""Bradley-Terry reward model (byte embeddings, one RMSNorm + grouped-query-attention + SwiGLU block,
mean pool, scalar score head) trained on weighted preference pairs: each pair's loss -log
sigmoid(r_chosen - r_rejected) is multiplied by the annotator-agreement weight shipped with the
data (normally 0.5-1.0). In one export shard the agreement column was missing and the exporter
wrote the uint16 fill value 65535 for four pairs. When that batch arrives (step 6) the weighted
loss is ~6e3 and its gradient is ~10^4 times the normal one. Adam normalises the update itself, so
nothing explodes, but the spike is written into every second-moment estimate v; with beta2 = 0.999
it takes thousands of steps to decay, so for the rest of the run every update is ~1/500 of its
normal size. The reward model is effectively frozen at its step-6 state: no NaN, no inf, one spike
and then a loss that sits at the initial ~0.5 for the remaining 140 steps. Fixed: the same run with
the sentinel weights replaced (clipped to the valid [0, 1] range) before training."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("reward-model training on weighted preference data (e.g. margin/agreement-weighted BT "
          "losses in Llama-2 RM, HelpSteer-style attributes) with a fill-value sentinel in an "
          "exported column")

V, D, T, NH, NKV = 32, 32, 20, 4, 2
HD = D // NH


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class GQA(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, NH * HD, bias=False)
        self.kv_proj = nn.Linear(D, 2 * NKV * HD, bias=False)
        self.o_proj = nn.Linear(NH * HD, D, bias=False)

    def forward(self, x):
        B, L, _ = x.shape
        q = self.q_proj(x).view(B, L, NH, HD).transpose(1, 2)
        k, v = self.kv_proj(x).view(B, L, 2, NKV, HD).permute(2, 0, 3, 1, 4)
        k = k.repeat_interleave(NH // NKV, dim=1)
        v = v.repeat_interleave(NH // NKV, dim=1)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.o_proj(y.transpose(1, 2).reshape(B, L, D))


class SwiGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(D, hidden, bias=False)
        self.w3 = nn.Linear(D, hidden, bias=False)
        self.w2 = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class RewardModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.norm1, self.attn = RMSNorm(D), GQA()
        self.norm2, self.mlp = RMSNorm(D), SwiGLU()
        self.norm_f = RMSNorm(D)
        self.score = nn.Linear(D, 1)

    def encode(self, ids):
        x = self.embed(ids)
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return self.score(self.norm_f(x).mean(1)).squeeze(-1)

    def forward(self, chosen, rejected):
        return self.encode(chosen), self.encode(rejected)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RewardModel()
    steps, B = 150, 32
    value = torch.zeros(V)
    value[:6] = 1.0      # "helpful" bytes
    value[6:12] = -1.0   # "harmful" bytes

    def batch():
        a = torch.randint(0, V, (B, T), generator=g)
        b = torch.randint(0, V, (B, T), generator=g)
        ra, rb = value[a].sum(1), value[b].sum(1)
        swap = rb > ra
        chosen = torch.where(swap[:, None], b, a)
        rejected = torch.where(swap[:, None], a, b)
        w = 0.5 + 0.5 * torch.rand(B, generator=g)
        return (chosen, rejected), w

    batches = [batch() for _ in range(steps)]
    bad = 6
    rows = torch.randperm(B, generator=g)[:4]
    batches[bad][1][rows] = 65535.0            # uint16 fill value in the agreement column
    if fixed:
        batches[bad] = (batches[bad][0], batches[bad][1].clamp(0.0, 1.0))

    def loss_fn(out, w):
        rc, rr = out
        return (w * -F.logsigmoid(rc - rr)).mean()

    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
