"""Bradley-Terry reward model with a bounded reward, r = tanh(w . pool(h)), as some RLHF pipelines do
to keep PPO rewards in [-1, 1]. The trunk is a byte-level short-convolution token mixer (causal
depthwise conv, as in H3/Mamba blocks) plus SwiGLU, with RMSNorm before the pooling. The pooling
SUMS the 96 normalised token states instead of averaging them: every token contributes a vector of
norm ~sqrt(d) that shares a common direction, so the pre-tanh score is typically 5-20 in magnitude
at init and the first updates push the rest out too. tanh is pinned at +1 or -1, chosen and
rejected get the same reward, the BT loss sits at log 2 and the gradient through tanh (1 - tanh^2 ~
1e-9) is gone: a silent plateau, no NaN, tiny gradients everywhere below the head. Fixed: mean
pooling (the same features divided by the sequence length), so the pre-activations are O(1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "reward_head.1"
SOURCE = ("bounded/tanh-squashed reward heads in RLHF reward models; sum- vs mean-pooling of token "
          "states saturating a tanh output (classic tanh saturation, LeCun 'Efficient BackProp')")

V, D, T = 32, 32, 96


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class ShortConvMixer(nn.Module):
    def __init__(self, k=4):
        super().__init__()
        self.in_proj = nn.Linear(D, 2 * D, bias=False)
        self.conv = nn.Conv1d(D, D, k, groups=D, padding=k - 1)
        self.out_proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        u, gate = self.in_proj(x).chunk(2, -1)
        u = self.conv(u.transpose(1, 2))[..., : x.shape[1]].transpose(1, 2)
        return self.out_proj(F.silu(u) * torch.sigmoid(gate))


class SwiGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(D, hidden, bias=False)
        self.w3 = nn.Linear(D, hidden, bias=False)
        self.w2 = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class BoundedRewardModel(nn.Module):
    def __init__(self, pool):
        super().__init__()
        self.pool = pool
        self.embed = nn.Embedding(V, D)
        self.norm1, self.mixer = RMSNorm(D), ShortConvMixer()
        self.norm2, self.ffn = RMSNorm(D), SwiGLU()
        self.norm_f = RMSNorm(D)
        self.reward_head = nn.Sequential(nn.Linear(D, 1), nn.Tanh())

    def reward(self, ids):
        x = self.embed(ids)
        x = x + self.mixer(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        h = self.norm_f(x)
        pooled = h.sum(1) if self.pool == "sum" else h.mean(1)
        return self.reward_head(pooled).squeeze(-1)

    def forward(self, chosen, rejected):
        return self.reward(chosen), self.reward(rejected)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = BoundedRewardModel("mean" if fixed else "sum")
    steps, B = 150, 32
    value = torch.zeros(V)
    value[:4], value[4:8] = 1.0, -1.0

    def batch():
        a = torch.randint(0, 16, (B, T), generator=g)
        b = torch.randint(0, 16, (B, T), generator=g)
        sa, sb = value[a].sum(1), value[b].sum(1)
        swap = sb > sa
        return (torch.where(swap[:, None], b, a), torch.where(swap[:, None], a, b)), sa.ne(sb).float()

    batches = [batch() for _ in range(steps)]

    def loss_fn(out, valid):
        rc, rr = out
        return (valid * -F.logsigmoid(rc - rr)).sum() / valid.sum()

    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
