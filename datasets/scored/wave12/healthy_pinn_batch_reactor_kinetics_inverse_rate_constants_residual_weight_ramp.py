"""Physics-informed network for a batch reactor with consecutive first-order reactions
A -> B -> C (dC_A/dt = -k1 C_A, dC_B/dt = k1 C_A - k2 C_B), used as an inverse problem: a tanh
MLP maps scaled time to (C_A, C_B), the rate constants k1, k2 are learned through log-parameters,
and the loss combines the MSE on 12 noisy concentration samples, the initial condition, and the
ODE residual at 64 random collocation times computed with autograd (create_graph=True inside
forward).  Inputs are a tuple (sample times, collocation times); the output a dict.  Following
common PINN practice the network is first fitted to the data alone for 40 steps and the residual
weight is then ramped linearly from 0 to 1 over the next 40, so the TOTAL loss first drops (data
fit), then roughly doubles and stays up for tens of steps while the physics term is switched on
and disagrees with the data-only fit (k1 = k2 = 1 initially, true 3 and 1.2), and only then falls
again as the curves and the rate constants move towards values consistent with both; the
residual gradients through the second-order graph are sizeable early on.  Nothing is wrong: every
term ends far below its start.  Healthy: fixed=True returns the same run."""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Raissi, Perdikaris & Karniadakis 2019 PINNs for inverse problems (parameter identification); "
          "chemical kinetics PINN tutorials; loss-weight warm-up / curriculum for the physics residual "
          "(Krishnapriyan et al. 2021, 'Characterizing possible failure modes in PINNs')")


class KineticsPINN(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 2))
        self.log_k = nn.Parameter(torch.zeros(2))                 # k1 = k2 = 1 initially

    def forward(self, t_data, t_col):
        c_data = self.net(t_data)
        t = t_col.clone().requires_grad_(True)
        c = self.net(t)
        dA = torch.autograd.grad(c[:, 0].sum(), t, create_graph=True)[0].squeeze(-1)
        dB = torch.autograd.grad(c[:, 1].sum(), t, create_graph=True)[0].squeeze(-1)
        k1, k2 = torch.exp(self.log_k)
        res = torch.stack([dA + k1 * c[:, 0], dB - k1 * c[:, 0] + k2 * c[:, 1]], dim=-1)
        c0 = self.net(torch.zeros(1, 1))
        return {"c_data": c_data, "residual": res, "c0": c0, "k": torch.exp(self.log_k)}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps, start, ramp = 300, 40, 40
    k1, k2 = 3.0, 1.2                                              # per unit of scaled time

    def exact(t):
        a = torch.exp(-k1 * t)
        b = k1 / (k2 - k1) * (torch.exp(-k1 * t) - torch.exp(-k2 * t))
        return torch.stack([a, b], dim=-1)

    t_obs = torch.sort(torch.rand(12, generator=g) * 2.0).values
    c_obs = exact(t_obs) + 0.01 * torch.randn(12, 2, generator=g)
    batches = []
    for s in range(steps):
        t_col = torch.rand(64, 1, generator=g) * 2.0
        batches.append(((t_obs.view(-1, 1), t_col), c_obs))

    model = KineticsPINN()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    state = {"step": 0}
    c_init = torch.tensor([[1.0, 0.0]])

    def loss_fn(out, target):
        lam = min(1.0, max(0.0, (state["step"] - start) / ramp))   # data-only warm-up, then ramp
        state["step"] += 1
        data = ((out["c_data"] - target) ** 2).mean()
        ic = ((out["c0"] - c_init) ** 2).mean()
        phys = (out["residual"] ** 2).mean()
        return data + ic + lam * phys

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
