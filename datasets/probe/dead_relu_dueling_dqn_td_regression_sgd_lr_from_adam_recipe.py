"""Dueling DQN (Wang et al. 2016) fitted by TD regression on a replay buffer whose bootstrapped
targets were precomputed (fitted-Q iteration style). The author swapped Adam for SGD+momentum but
kept an lr tuned for a much smaller effective step, so the first updates overshoot: the loss
jumps up, the pre-activations of the trunk's second ReLU layer are driven negative for every
state and the ReLUs die. Only the value/advantage biases keep learning, so Q collapses to a
per-action constant and the loss sits flat near the target variance.
ORIGIN: trunk.3 (the second ReLU of the shared trunk, which dies first and blocks every path to the
value and advantage streams). Fix: the SGD lr appropriate for this momentum setting (0.01)."""
import torch, torch.nn as nn
CAUSE = "dead_relu"
ORIGIN = "trunk.3"
SOURCE = "DQN/dueling re-implementations that switch Adam->SGD momentum keeping a large lr; forum reports of Q-net outputs becoming constant"
class DuelingQ(nn.Module):
    def __init__(s, d, h, a):
        super().__init__()
        s.trunk = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        s.value = nn.Linear(h, 1); s.adv = nn.Linear(h, a)
    def forward(s, x):
        z = s.trunk(x); A = s.adv(z)
        return s.value(z) + A - A.mean(1, keepdim=True)
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    d, h, na, bs, steps, lr = [(8, 64, 4, 64, 120, 0.6), (12, 96, 6, 32, 150, 0.4), (6, 48, 3, 128, 100, 0.8)][seed]
    W1 = torch.randn(d, 32, generator=g) / d ** .5; W2 = torch.randn(32, na, generator=g) / 32 ** .5
    model = DuelingQ(d, h, na)
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else lr, momentum=0.9)
    def loss_fn(q, y):
        return nn.functional.mse_loss(q.gather(1, y[:, :1].long()).squeeze(1), y[:, 1])
    batches = []
    for _ in range(steps):
        s = torch.randn(bs, d, generator=g); a = torch.randint(0, na, (bs,), generator=g)
        q = torch.tanh(s @ W1) @ W2; t = q.gather(1, a[:, None]).squeeze(1) * 1.5
        batches.append((s, torch.stack([a.float(), t], 1)))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
