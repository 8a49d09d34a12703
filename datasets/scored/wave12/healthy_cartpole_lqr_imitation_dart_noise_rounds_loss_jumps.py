"""Behaviour cloning of a saturated LQR balancing controller for a (linearised, discretised) cart-
pole, with DART-style data collection: the dataset is gathered in four rounds of expert rollouts
with increasing action-noise injection, and each round is aggregated into the training pool
(round r's batches are drawn from rounds 0..r). Every time a round is added the batches suddenly
contain states further from the upright equilibrium, where the expert saturates and the policy
has never been trained, so the loss jumps (5-20x at step 60, less at 120 and 180) and then
decays again. A loss curve with a staircase of spikes looks like instability but is the expected
signature of dataset aggregation; SGD with Nesterov momentum trains the tanh MLP policy to a
small final error."""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Laskey et al. 2017 'DART: Noise Injection for Robust Imitation Learning'; Ross et al. "
          "2011 DAgger dataset aggregation; loss jumps when a new aggregation round arrives")

DT, M_CART, M_POLE, L_POLE, G, U_MAX = 0.05, 1.0, 0.2, 0.5, 9.81, 3.0


def linear_cartpole():
    Ac = torch.tensor([[0, 1, 0, 0],
                       [0, 0, -M_POLE * G / M_CART, 0],
                       [0, 0, 0, 1],
                       [0, 0, (M_CART + M_POLE) * G / (M_CART * L_POLE), 0]], dtype=torch.float64)
    Bc = torch.tensor([[0], [1 / M_CART], [0], [-1 / (M_CART * L_POLE)]], dtype=torch.float64)
    return torch.eye(4, dtype=torch.float64) + DT * Ac, DT * Bc


def lqr_gain(A, B):
    Q = torch.diag(torch.tensor([1.0, 0.1, 10.0, 0.1], dtype=torch.float64))
    R = torch.tensor([[0.1]], dtype=torch.float64)
    P = Q.clone()
    for _ in range(2000):
        K = torch.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ (A - B @ K)
    return K.float()


def expert(x, K):
    return U_MAX * torch.tanh((-(x @ K.T)) / U_MAX)


def collect(g, A, B, K, n_ep, spread, noise, horizon=30):
    x = torch.randn(n_ep, 4, generator=g) * torch.tensor([0.3, 0.3, 0.08, 0.2]) * spread
    A, B = A.float(), B.float()
    alive = torch.ones(n_ep, dtype=torch.bool)
    xs, us = [], []
    for _ in range(horizon):
        # episode terminates once the pole falls past 0.5 rad or the cart leaves the track
        alive = alive & (x[:, 2].abs() < 0.5) & (x[:, 0].abs() < 2.4)
        u_star = expert(x, K)
        xs.append(x[alive]); us.append(u_star[alive])
        u = (u_star + noise * torch.randn(n_ep, 1, generator=g)).clamp(-U_MAX, U_MAX)
        x = x @ A.T + u @ B.T
    return torch.cat(xs), torch.cat(us)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    A, B = linear_cartpole()
    K = lqr_gain(A, B)
    rounds = [(1.0, 0.0), (2.0, 0.5), (3.5, 1.0), (5.0, 2.0)]   # (initial-state spread, noise)
    data = [collect(g, A, B, K, 64, s, nz) for s, nz in rounds]
    model = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 1))
    steps, per_round, bs = 240, 60, 64
    batches = []
    for step in range(steps):
        r = min(step // per_round, len(rounds) - 1)
        X = torch.cat([d[0] for d in data[: r + 1]])
        U = torch.cat([d[1] for d in data[: r + 1]])
        idx = torch.randint(0, X.shape[0], (bs,), generator=g)
        # state features scaled by fixed nominal ranges (same for every round)
        batches.append((X[idx] / torch.tensor([1.0, 1.0, 0.3, 1.0]), U[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
