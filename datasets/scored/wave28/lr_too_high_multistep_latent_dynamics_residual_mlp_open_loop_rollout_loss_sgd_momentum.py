"""Learned dynamics model for model-based RL, trained with a multi-step (open-loop) rollout loss.

Data: a synthetic linear-quadratic plant (randomly drawn stable 4-D system, 2-D control) plus a
mild non-linearity; each sample is a start state, H actions and the H true next states.  Model:
encoder MLP -> latent z, residual latent transition z' = z + f([z, a]) (SiLU MLP) unrolled H steps
open loop, decoder back to the state; loss = mean squared error summed over the H predicted states
(the "multi-step prediction loss" used by PlaNet/TD-MPC-style models to fight compounding error).

Mechanism: the learning rate (SGD, momentum 0.9) was tuned for the one-step model and kept when the
horizon was raised to H = 8-12.  Unrolling multiplies the Jacobian of the transition H times and
sums H error terms, so the curvature of the loss -- and the largest stable step size -- scales up
and down with H.  With the one-step lr the updates overshoot: the transition's gain exceeds one,
the unrolled predictions and their gradients grow geometrically, each step is larger than the
last, and within a few dozen steps the weights and the loss overflow to inf/NaN.

ORIGIN: None -- an optimiser setting; no single module starts it (the transition network is where
the growth is largest, but all layers take oversized steps).

Fix: a lower learning rate for the multi-step objective (0.1x the one-step value); same model, data
and horizon.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Multi-step prediction losses for learned dynamics (PlaNet, Hafner et al. 2019; TD-MPC, "
          "Hansen et al. 2022); exploding gradients through long unrolls need smaller steps "
          "(Pascanu et al. 2013); lr tuned for the one-step model kept for the H-step loss")


class LatentDynamics(nn.Module):
    def __init__(self, s_dim, a_dim, z_dim, width):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(s_dim, width), nn.SiLU(), nn.Linear(width, z_dim))
        self.transition = nn.Sequential(nn.Linear(z_dim + a_dim, width), nn.SiLU(),
                                        nn.Linear(width, width), nn.SiLU(),
                                        nn.Linear(width, z_dim))
        self.decoder = nn.Sequential(nn.Linear(z_dim, width), nn.SiLU(), nn.Linear(width, s_dim))

    def forward(self, s0, actions):
        z = self.encoder(s0)
        preds = []
        for t in range(actions.shape[1]):
            z = z + self.transition(torch.cat([z, actions[:, t]], dim=-1))
            preds.append(self.decoder(z))
        return torch.stack(preds, dim=1)


def _multistep_mse(pred, target):
    return ((pred - target) ** 2).sum(-1).mean(0).sum()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    s_dim, a_dim = 4, 2
    H = [8, 12, 10][seed % 3]
    width = [64, 128, 96][seed % 3]
    z_dim = [16, 24, 32][seed % 3]
    batch = [32, 64, 48][seed % 3]
    lr_one_step = [0.015, 0.01, 0.012][seed % 3]
    steps = 150

    Q, _ = torch.linalg.qr(torch.randn(s_dim, s_dim, generator=g))
    A = Q @ torch.diag(torch.tensor([0.97, 0.9, 0.8, 0.6])) @ Q.T
    B = 0.3 * torch.randn(s_dim, a_dim, generator=g)

    batches = []
    for _ in range(steps):
        s = torch.randn(batch, s_dim, generator=g)
        acts = torch.randn(batch, H, a_dim, generator=g).clamp(-2, 2)
        s0, traj = s, []
        for t in range(H):
            s = s @ A.T + acts[:, t] @ B.T + 0.1 * torch.tanh(s).roll(1, -1)
            traj.append(s)
        batches.append(((s0, acts), torch.stack(traj, 1)))

    torch.manual_seed(seed)
    model = LatentDynamics(s_dim, a_dim, z_dim, width)
    lr = 0.1 * lr_one_step if fixed else lr_one_step
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": _multistep_mse, "batches": batches,
            "steps": steps}
