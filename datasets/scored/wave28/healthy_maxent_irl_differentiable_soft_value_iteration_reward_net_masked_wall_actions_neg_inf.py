"""Maximum-entropy IRL with a differentiable soft value iteration (Ziebart et al. 2008; deep MaxEnt
IRL, Wulfmeier et al. 2015) on random gridworlds with walls.  HEALTHY.

Data: an n x n gridworld (n = 6-8) with random walls, one goal and a few hazard cells; per-cell
features (goal-distance RBFs, hazard flag, normalised coordinates) are fixed buffers of the model.
Expert (state, action) pairs are sampled from the soft-optimal policy of the hidden true reward.
Model: a reward MLP maps cell features to r(s); K rounds of soft value iteration
    Q(s, a) = r(s) + gamma * V(s'(s, a)) + mask(s, a),   V(s) = logsumexp_a Q(s, a)
give log pi(a|s) = Q(s, a) - logsumexp_b Q(s, b); the forward returns the full log-policy table for the batch's
states.  Loss: negative log-likelihood of the expert actions.

Why it looks alarming but is healthy: moves into walls or off the grid are masked with -inf, so the
model's output tensor (and Q inside the VI) is full of -inf values every step.  They never reach
the loss: there is always a valid "stay" action (so no row is all -inf), logsumexp handles -inf
entries exactly, their softmax weight and gradient are exactly 0, and the expert never takes a
masked action, so the gathered log-probabilities are finite.  The NLL decreases steadily.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Maximum entropy IRL (Ziebart et al. 2008), deep MaxEnt IRL with a reward network "
          "(Wulfmeier et al. 2015), differentiable soft value iteration as in VIN/QMDP-net style "
          "planners; invalid-action masking with -inf logits (Huang & Ontanon 2020)")

MOVES = [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)]


class SoftVIIRL(nn.Module):
    def __init__(self, feats, next_idx, mask, width, k_iters, gamma):
        super().__init__()
        self.register_buffer("feats", feats)
        self.register_buffer("next_idx", next_idx)        # [S, 5]
        self.register_buffer("mask", mask)                # [S, 5], 0 or -inf
        self.k, self.gamma = k_iters, gamma
        self.reward = nn.Sequential(nn.Linear(feats.shape[1], width), nn.ReLU(),
                                    nn.Linear(width, 1))

    def forward(self, states):
        r = self.reward(self.feats).squeeze(-1)           # [S]
        v = torch.zeros_like(r)
        for _ in range(self.k):
            q = r.unsqueeze(1) + self.gamma * v[self.next_idx] + self.mask
            v = torch.logsumexp(q, dim=1)
        q = r.unsqueeze(1) + self.gamma * v[self.next_idx] + self.mask
        logpi = q - torch.logsumexp(q, dim=1, keepdim=True)
        return logpi[states]                              # [B, 5], -inf where masked


def _nll(logpi, actions):
    return -logpi.gather(1, actions.unsqueeze(1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n = [6, 8, 7][seed % 3]
    width = [32, 64, 48][seed % 3]
    batch = [64, 32, 48][seed % 3]
    lr = [1e-2, 5e-3, 8e-3][seed % 3]
    k_iters, gamma = 2 * n, 0.9
    steps = 150
    S = n * n

    walls = torch.rand(n, n, generator=g) < 0.15
    cells = torch.stack(torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij"), -1).reshape(-1, 2)
    free = (~walls.reshape(-1)).nonzero().squeeze(1)
    pick = free[torch.randperm(len(free), generator=g)[:4]]
    goal, hazards = cells[pick[0]], cells[pick[1:]]

    next_idx = torch.zeros(S, 5, dtype=torch.long)
    mask = torch.zeros(S, 5)
    for s in range(S):
        x, y = cells[s].tolist()
        for k, (dx, dy) in enumerate(MOVES):
            nx, ny = x + dx, y + dy
            if 0 <= nx < n and 0 <= ny < n and not walls[nx, ny]:
                next_idx[s, k] = nx * n + ny
            else:
                next_idx[s, k] = s
                mask[s, k] = float("-inf")

    d_goal = (cells - goal).float().norm(dim=-1)
    is_haz = torch.zeros(S)
    for h in hazards:
        is_haz[h[0] * n + h[1]] = 1.0
    feats = torch.stack([torch.exp(-d_goal ** 2 / 2), torch.exp(-d_goal ** 2 / 8),
                         torch.exp(-d_goal ** 2 / 32), is_haz,
                         cells[:, 0].float() / (n - 1), cells[:, 1].float() / (n - 1)], -1)
    true_r = 2.0 * (d_goal == 0).float() - 1.0 * is_haz - 0.1

    # expert: soft-optimal policy of the true reward
    v = torch.zeros(S)
    for _ in range(3 * n):
        q = true_r.unsqueeze(1) + gamma * v[next_idx] + mask
        v = torch.logsumexp(q * 4.0, 1) / 4.0
    q = true_r.unsqueeze(1) + gamma * v[next_idx] + mask
    expert_pi = torch.softmax(q * 4.0, 1)

    batches = []
    for _ in range(steps):
        st = free[torch.randint(0, len(free), (batch,), generator=g)]
        a = torch.multinomial(expert_pi[st], 1, generator=g).squeeze(1)
        batches.append((st, a))

    torch.manual_seed(seed)
    model = SoftVIIRL(feats, next_idx, mask, width, k_iters, gamma)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": _nll, "batches": batches, "steps": steps}
