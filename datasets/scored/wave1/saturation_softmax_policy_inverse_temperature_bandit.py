"""Softmax policy for a contextual bandit (10 candidate items, 12-d user context), trained with
SGD + momentum by maximising the exact expected reward E_{a~pi}[r(s,a)]: the loss is the expected
regret max_a r - sum_a pi(a|s) r(s,a), computed from logged full-information click-probability
vectors. The policy divides its logits by a temperature tau=0.005 (beta=200) carried over from the
Boltzmann-exploration config of a Q-learning baseline, where it scaled Q-value differences of
order 0.01. On logits of order 0.1 it pushes the pre-softmax values to +-15-50 from the first
step: the softmax is saturated on one arm per context, its Jacobian diag(pi) - pi pi^T is ~0, the
gradient to the network vanishes (except for rare near-ties, whose big updates only flip which
arm is saturated), and the regret does not go down (a silent stall, no NaN). The fixed run only
uses tau=1, so the pre-activations stay in the softmax's responsive range."""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "logits"
SOURCE = ("Softmax/Boltzmann policy temperature too low: saturated policy, vanishing policy "
          "gradient and premature determinism (Sutton & Barto ch. 13; entropy-collapse reports)")


class SoftmaxPolicy(nn.Module):
    def __init__(self, d_ctx, n_arms, tau, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_ctx, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.logits = nn.Linear(hidden, n_arms)
        self.tau = tau

    def forward(self, ctx):
        return torch.softmax(self.logits(self.body(ctx)) / self.tau, -1)


def expected_regret(pi, rewards):
    return (rewards.max(-1).values - (pi * rewards).sum(-1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_ctx, n_arms = 12, 10
    arm_vec = torch.randn(n_arms, d_ctx, generator=g)
    batches = []
    for _ in range(25):
        ctx = torch.randn(128, d_ctx, generator=g)
        rewards = torch.sigmoid(2.0 * ctx @ arm_vec.t() / d_ctx ** 0.5)        # click probabilities
        batches.append((ctx, rewards))
    model = SoftmaxPolicy(d_ctx, n_arms, tau=1.0 if fixed else 0.005)
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    steps = 150
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=expected_regret, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
