"""Latent ODE-style trajectory model (Chen et al. 2018 / Rubanova et al. 2019, simplified): an
encoder maps the first 4 observations of a damped oscillator to a latent state z0, a tanh MLP
vector field is integrated with 20 explicit Euler steps (dt=0.25), and a linear decoder predicts
the next 20 observations (MSE).  The model is trained with SGD + momentum 0.9 at lr=0.5: the
gradient through a 20-step unrolled integrator is large (it compounds through every step), so
with this lr the first updates overshoot, the vector-field weights grow, the integrated latent
state explodes over the horizon and the loss reaches inf/NaN within about five steps.  The
fix is lr=0.02 (same model, data, optimiser and momentum)."""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Chen et al. 'Neural Ordinary Differential Equations' (NeurIPS 2018) latent ODE; Rubanova et al. "
          "2019; exploding gradients through unrolled fixed-step solvers with a large SGD lr")

OBS, LAT, HID, N_CTX, N_PRED, DT = 2, 8, 32, 4, 20, 0.25


class LatentODE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(OBS * N_CTX, HID), nn.Tanh(), nn.Linear(HID, LAT))
        self.vector_field = nn.Sequential(nn.Linear(LAT, HID), nn.Tanh(), nn.Linear(HID, LAT))
        self.decoder = nn.Linear(LAT, OBS)

    def forward(self, ctx):
        z = self.encoder(ctx.flatten(1))
        outs = []
        for _ in range(N_PRED):
            z = z + DT * self.vector_field(z)
            outs.append(self.decoder(z))
        return torch.stack(outs, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)

    def sample(n):
        w = 0.8 + 0.8 * torch.rand(n, 1, generator=g)
        gamma = 0.05 + 0.1 * torch.rand(n, 1, generator=g)
        phase = 2 * torch.pi * torch.rand(n, 1, generator=g)
        amp = 0.5 + torch.rand(n, 1, generator=g)
        t = torch.arange(N_CTX + N_PRED).float()[None] * DT
        x = amp * torch.exp(-gamma * t) * torch.cos(w * t + phase)
        v = amp * torch.exp(-gamma * t) * torch.sin(w * t + phase)
        traj = torch.stack([x, v], -1) + 0.02 * torch.randn(n, N_CTX + N_PRED, 2, generator=g)
        return traj[:, :N_CTX], traj[:, N_CTX:]

    steps = 200
    batches = [sample(64) for _ in range(steps)]
    model = LatentODE()
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else 0.5, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
