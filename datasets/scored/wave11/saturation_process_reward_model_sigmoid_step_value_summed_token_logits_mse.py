"""Process reward model (PRM) over byte-level reasoning traces: a solution is two 80-byte steps; a
pre-RMSNorm block with grouped-query attention and SwiGLU encodes the bytes, a linear "token
critic" gives every byte a logit, and the value of a step is sigmoid(sum of the token logits in
that step), regressed with MSE onto Monte-Carlo soft labels (the fraction of successful roll-outs
from that step, Math-Shepherd style). Summing (instead of averaging) 80 token logits that share a
common component puts the step logit at |z| ~ 1..17 at init (median 5-9), and because the sum also
multiplies the critic's gradient by 80, the first momentum-SGD updates throw every step logit out
to |z| ~ 200-700, all on the same side. sigmoid is pinned at 0 or 1 for every step of every trace,
sigmoid'(z) underflows to ~0, and with an MSE loss (unlike BCE-with-logits) nothing cancels the
vanished derivative: the predicted values are frozen and the loss stays flat or ends higher than it
started. No NaN, zero gradients below the critic. Fixed: the step logit is the MEAN of the token
logits in the step (pre-activations O(1))."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "step_value"
SOURCE = ("Math-Shepherd / OmegaPRM process reward models with Monte-Carlo soft labels; sigmoid + "
          "MSE saturation (Glorot & Bengio 2010) caused by an un-normalised sum over tokens")

V, D, STEP, NSTEP, NH, NKV = 32, 32, 80, 2, 4, 2
T, HD = STEP * NSTEP, D // NH


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
        self.o_proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        B, S, _ = x.shape
        q = self.q_proj(x).view(B, S, NH, HD).transpose(1, 2)
        k, v = self.kv_proj(x).view(B, S, 2, NKV, HD).permute(2, 0, 3, 1, 4)
        r = NH // NKV
        y = F.scaled_dot_product_attention(q, k.repeat_interleave(r, 1), v.repeat_interleave(r, 1), is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(B, S, D))


class SwiGLU(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(D, hidden, bias=False)
        self.w3 = nn.Linear(D, hidden, bias=False)
        self.w2 = nn.Linear(hidden, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class StepValue(nn.Module):
    def __init__(self, reduce):
        super().__init__()
        self.reduce = reduce

    def forward(self, token_logits):
        per_step = token_logits.view(token_logits.shape[0], NSTEP, STEP)
        z = per_step.sum(-1) if self.reduce == "sum" else per_step.mean(-1)
        return torch.sigmoid(z)


class ProcessRewardModel(nn.Module):
    def __init__(self, reduce):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.norm1, self.attn = RMSNorm(D), GQA()
        self.norm2, self.ffn = RMSNorm(D), SwiGLU()
        self.norm_f = RMSNorm(D)
        self.token_critic = nn.Linear(D, 1)
        self.step_value = StepValue(reduce)

    def forward(self, ids):
        x = self.embed(ids)
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return self.step_value(self.token_critic(self.norm_f(x)).squeeze(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ProcessRewardModel("mean" if fixed else "sum")
    steps, B = 120, 16

    def batch():
        rate = 0.25 * torch.rand(B, NSTEP, 1, generator=g)                   # error rate per step
        err = torch.rand(B, NSTEP, STEP, generator=g) < rate
        ids = torch.where(err, torch.randint(0, 4, (B, NSTEP, STEP), generator=g),
                          torch.randint(4, V, (B, NSTEP, STEP), generator=g)).view(B, T)
        n_err = err.float().sum(-1).cumsum(-1)                                 # errors so far
        value = torch.exp(-n_err / 8.0)                                        # MC success rate
        return ids, value

    batches = [batch() for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
