"""On-policy advantage-weighted policy update (AWR / reward-weighted regression) on a contextual bandit.

Actions are sampled from the policy, rewards are 0/1, and the advantages are whitened per batch:
adv = (r - r.mean()) / r.std(); loss = mean(exp(adv / beta) * -log pi(a|s)).  The run is calm while the
policy improves, but once it is accurate a batch arrives where every sampled action is rewarded:
r.std() == 0 and r - r.mean() == 0, so adv = 0/0 = NaN and the loss (computed in loss_fn) is NaN.
fixed=True: the same whitening with an epsilon, (r - r.mean()) / (r.std() + 1e-8).
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("per-batch advantage/return whitening (R - R.mean()) / (R.std() + eps) as in pytorch/examples "
          "reinforce.py, PPO and GRPO; AWR (Peng et al. 2019) exp(A/beta) weights. Dropping the eps gives "
          "0/0 = NaN when all rewards in a batch are equal (reported in GRPO/TRL and SB3 issues)")


class Policy(nn.Module):
    def __init__(self, d_in, n_act, d_hid=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, d_hid), nn.Tanh(), nn.Linear(d_hid, d_hid), nn.Tanh())
        self.logits = nn.Linear(d_hid, n_act)

    def forward(self, ctx):
        return self.logits(self.body(ctx))


def make_loss(seed, fixed, beta=1.0):
    g = torch.Generator().manual_seed(10_000 + seed)   # action sampling, deterministic per seed

    def awr(logits, best_action):
        logp = torch.log_softmax(logits, dim=-1)
        with torch.no_grad():
            u = torch.rand(logp.shape, generator=g).clamp_min(1e-12)
            a = (logp - torch.log(-torch.log(u))).argmax(dim=-1)     # Gumbel-max sample from the policy
            r = (a == best_action).float()
            if fixed:
                adv = (r - r.mean()) / (r.std() + 1e-8)
            else:
                adv = (r - r.mean()) / r.std()
            w = torch.exp(adv / beta).clamp(max=20.0)
        nll = -logp.gather(1, a[:, None]).squeeze(1)
        return (w * nll).mean()
    return awr


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in, n_states, n_act, bs, steps = 16, 12, 4, 32, 300
    protos = torch.randn(n_states, d_in, generator=g)
    best = torch.randint(0, n_act, (n_states,), generator=g)
    batches = []
    for _ in range(steps):
        s = torch.randint(0, n_states, (bs,), generator=g)
        ctx = protos[s] + 0.3 * torch.randn(bs, d_in, generator=g)
        batches.append((ctx, best[s]))
    model = Policy(d_in, n_act)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(seed, fixed), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
