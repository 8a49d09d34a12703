"""Off-policy reward model for a contextual bandit, trained with inverse-propensity weights.

Setting: a logging policy (epsilon-softmax, every arm has propensity >= eps/K) chose arms for
synthetic user contexts; the reward model f(x)[a] = <context tower(x), arm embedding(a)> + arm bias is
fit to the logged rewards with the importance-weighted squared error  w * (f(x)[a] - r)^2,
w = 1 / (K * p_logged), so that the fit targets the uniform policy's distribution.

Mechanism: one early logged shard (its position varies with the seed, step 2-4) came from a logger
version that wrote propensities in float16 and flushed small values to ~1e-7.  Those rows get
importance weights ~1e5-1e6; that single batch's gradient is 5-6 orders of magnitude above normal.
Adam takes one bounded step, but its second-moment estimate v now holds that gradient squared and
decays with beta2 = 0.999 (time constant ~1000 steps): every later update is lr * g / sqrt(v) with
g/sqrt(v) ~ 1e-5, so the model is frozen for the rest of the run.  No value is ever non-finite; the
loss simply stays where it was at the corrupt shard (a stall), while the run without the corrupt
weights learns.

ORIGIN: "context_tower.0", the first layer that the corrupt batch's exploding weighted gradient
reaches with the largest magnitude (the propensity itself is data, not a module).

Fix: clip the logged propensities to the logging policy's own floor (eps/K) before forming the
weights -- equivalently, clipped IPS -- which leaves every clean row unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "context_tower.0"
SOURCE = ("Clipped importance weights for off-policy bandit learning (Strehl et al. 2010; Bottou et "
          "al. 2013 'Counterfactual reasoning'); Adam's second-moment estimate poisoned by one "
          "gradient spike freezes training (PyTorch forum 'loss stops decreasing after one huge "
          "batch with Adam')")


class ArmEmbeddingRewardModel(nn.Module):
    def __init__(self, ctx_dim, n_arms, width, emb):
        super().__init__()
        self.context_tower = nn.Sequential(nn.Linear(ctx_dim, width), nn.SiLU(),
                                           nn.Linear(width, width), nn.SiLU(),
                                           nn.Linear(width, emb))
        self.arm_emb = nn.Embedding(n_arms, emb)
        self.arm_bias = nn.Embedding(n_arms, 1)

    def forward(self, x, a):
        h = self.context_tower(x)
        return (h * self.arm_emb(a)).sum(-1) + self.arm_bias(a).squeeze(-1)


def _ips_loss(pred, target):
    r, p, k = target
    w = 1.0 / (k * p)
    return (w * (pred - r) ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ctx_dim, n_arms = 12, [6, 8, 10][seed % 3]
    width = [64, 96, 128][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bad_step = 2 + seed % 3
    steps = 160
    eps = 0.2

    theta = torch.randn(n_arms, ctx_dim, generator=g) / ctx_dim ** 0.5
    logging_w = torch.randn(n_arms, ctx_dim, generator=g)

    torch.manual_seed(seed)
    model = ArmEmbeddingRewardModel(ctx_dim, n_arms, width, emb=16)

    batches = []
    for t in range(steps):
        x = torch.randn(batch, ctx_dim, generator=g)
        probs = (1 - eps) * torch.softmax(x @ logging_w.T, -1) + eps / n_arms
        a = torch.multinomial(probs, 1, generator=g).squeeze(-1)
        p = probs[torch.arange(batch), a]
        mean_r = torch.tanh(2.0 * (x * theta[a]).sum(-1)) + 0.5 * torch.sin(x[:, 0] * (a + 1))
        r = mean_r + 0.1 * torch.randn(batch, generator=g)
        if t == bad_step:
            rows = torch.randperm(batch, generator=g)[: batch // 4]
            p = p.clone()
            p[rows] = 1e-7                       # float16 logger flushed propensities
        if fixed:
            p = p.clamp_min(eps / n_arms)        # clipped IPS: logging floor restored
        batches.append(((x, a), (r, p, float(n_arms))))

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": _ips_loss, "batches": batches,
            "steps": steps}
