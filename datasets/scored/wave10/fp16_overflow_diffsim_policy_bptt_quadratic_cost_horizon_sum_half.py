"""Policy optimisation by back-propagation through a differentiable simulator (analytic policy
gradients, as in Brax/diffsim 'APG'): a small tanh MLP controller drives a batch of planar
double-integrator drones for a 40-step horizon, the rollout (x_{t+1} = A x_t + B u_t) runs inside
the model, and a QuadraticCost module returns the LQR cost-to-go sum_t x'Qx + u'Ru per trajectory
with a stiff position weight Q_pos = 500. The run was switched to fp16 autocast to speed it up. Under
autocast the policy and dynamics matmuls produce float16 states, so the quadratic terms and the
horizon sum are float16 too: a single trajectory's cost-to-go (~1e5 at the start) is above 65504 and
becomes inf, and the loss is non-finite from the first step. Fixed: the same run under bfloat16
autocast (fp32 exponent range), nothing else changed."""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "cost"
SOURCE = ("fp16 autocast range overflow in a summed quadratic (LQR) cost-to-go of a differentiable-"
          "simulator policy (APG/BPTT through dynamics); PyTorch AMP docs: fp16 max 65504")

DT, H = 0.05, 40


class DoubleIntegrator(nn.Module):
    def __init__(self):
        super().__init__()
        A = torch.eye(4)
        A[0, 2] = A[1, 3] = DT
        B = torch.zeros(4, 2)
        B[2, 0] = B[3, 1] = DT
        self.register_buffer("A", A)
        self.register_buffer("B", B)

    def forward(self, x, u):
        return x @ self.A.T + u @ self.B.T


class QuadraticCost(nn.Module):
    def __init__(self, q_pos=500.0, q_vel=5.0, r=0.1):
        super().__init__()
        self.register_buffer("Q", torch.diag(torch.tensor([q_pos, q_pos, q_vel, q_vel])))
        self.r = r

    def forward(self, xs, us):                       # [T,B,4], [T,B,2] -> per-trajectory cost [B]
        stage = ((xs @ self.Q) * xs).sum(-1) + self.r * (us * us).sum(-1)     # x'Qx + r u'u
        return stage.sum(0)                          # cost-to-go summed over the horizon


class APGController(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(4, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                    nn.Linear(hidden, 2))
        self.sim = DoubleIntegrator()
        self.cost = QuadraticCost()

    def forward(self, x0):
        x, xs, us = x0, [], []
        for _ in range(H):
            u = 10.0 * self.policy(x)
            x = self.sim(x, u)
            xs.append(x)
            us.append(u)
        return self.cost(torch.stack(xs), torch.stack(us))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = APGController()
    steps = 60
    batches = []
    for _ in range(steps):
        x0 = torch.cat([torch.randn(64, 2, generator=g) * 1.5, torch.randn(64, 2, generator=g) * 0.5], 1)
        batches.append((x0, torch.zeros(64)))

    def loss_fn(cost, _unused):
        return cost.mean() / H                       # mean stage cost, for logging

    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
