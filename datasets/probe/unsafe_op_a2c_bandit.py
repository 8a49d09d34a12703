"""Actor-critic policy on a contextual bandit with batch-normalised returns and no epsilon.

Mechanism: a shared tanh body with an actor (softmax over 4 arms) and a critic head. Each step
samples one action per context, gets reward +1 for the best arm and -1 otherwise, and
normalises the batch returns as in pytorch/examples reinforce.py/actor_critic.py:
(r - r.mean()) / (r.std() + eps) -- but here without eps. The run is calm and improves; once the
policy is good enough that every sample in a batch of 16 gets the same reward, r.std() is exactly
0 and the advantage is 0/0 = NaN, so the loss is NaN (the step depends on seed).
ORIGIN: None; the 0/0 happens in the loss on a batch statistic, no layer is at fault.
fixed=True: eps = 1e-8 in the denominator (all-equal returns give zero advantage).
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = 'pytorch/examples reinforcement_learning reinforce.py / actor_critic.py return normalisation with eps; NaN when std of returns is 0 without it'

class ActorCritic(nn.Module):
    def __init__(self, d, n_arms, h=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh())
        self.actor = nn.Linear(h, n_arms)
        self.critic = nn.Linear(h, 1)
    def forward(self, x):
        z = self.body(x)
        return self.actor(z), self.critic(z).squeeze(-1)

def build(seed, fixed=False, steps=250, lr=1e-2):
    g = torch.Generator().manual_seed(seed)
    d, K, B = 8, 4, 16
    W = torch.randn(d, K, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(B, d, generator=g)
        best = (x @ W).argmax(-1)
        rew = torch.full((B, K), -1.0); rew[torch.arange(B), best] = 1.0
        batches.append((x, rew))
    torch.manual_seed(seed)
    model = ActorCritic(d, K)
    sampler = torch.Generator().manual_seed(1000 + seed)
    eps = 1e-8 if fixed else 0.0
    def loss_fn(out, rew):
        logits, value = out
        logp = F.log_softmax(logits.float(), -1)
        a = torch.multinomial(logp.detach().exp(), 1, generator=sampler).squeeze(-1)
        r = rew[torch.arange(rew.shape[0]), a]
        adv = (r - r.mean()) / (r.std() + eps)
        policy = -(logp[torch.arange(r.shape[0]), a] * adv).mean()
        return policy + F.mse_loss(value, r)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
