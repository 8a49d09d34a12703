"""Noise-contrastive estimation (Gutmann & Hyvarinen 2010) of an unnormalised density
log p_theta(x) = -E_theta(x) - c, with an MLP energy and a learned log-partition scalar c.
The classifier between data and noise samples is sigmoid(G(x)), G = log p_theta(x) - log p_n(x),
written as `nn.Sigmoid()` followed by `nn.BCELoss`.

Mechanism: the noise is a broad Gaussian in D dimensions, so log p_n(x) ~ -D*(log sigma_n + 0.92)
~ -50 to -80, while c is initialised to 0 and the energies are O(1): G ~ +50 for *every* sample.
sigmoid(50) is exactly 1.0 in float32, so the sigmoid unit is saturated for data and noise alike:
BCELoss clamps log(1 - 1) to -100 and the gradient through the saturated sigmoid is exactly 0.
Nothing moves; the loss stays at ~50 for the whole run.
ORIGIN: sigmoid - the saturated unit that kills the gradient.
Fix: initialise the log-partition c at the noise log-density scale, so G starts near 0 and the
sigmoid operates in its linear range (only the init of c changes)."""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "sigmoid"
SOURCE = "Gutmann & Hyvarinen 2010 NCE; saturated sigmoid+BCELoss when the noise log-density dominates the logit (PyTorch forum 'NCE loss stuck at 50')"


class NCEDensity(nn.Module):
    def __init__(self, d_in, width, noise_std, c_init):
        super().__init__()
        self.energy = nn.Sequential(nn.Linear(d_in, width), nn.SiLU(), nn.Linear(width, width), nn.SiLU(),
                                    nn.Linear(width, 1))
        self.log_z = nn.Parameter(torch.tensor(float(c_init)))
        self.noise_std = noise_std
        self.sigmoid = nn.Sigmoid()

    def log_noise(self, x):
        d = x.shape[1]
        return (-0.5 * (x / self.noise_std) ** 2).sum(1) - d * (math.log(self.noise_std) + 0.5 * math.log(2 * math.pi))

    def forward(self, x_data, x_noise):
        x = torch.cat([x_data, x_noise])
        logit = -self.energy(x).squeeze(1) - self.log_z - self.log_noise(x)
        return self.sigmoid(logit)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = [16, 24, 20][seed % 3]
    width = [64, 48, 96][seed % 3]
    bs = [64, 128, 96][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    noise_std = 4.0
    steps = 100
    c_init = d_in * (math.log(noise_std) + 0.5 * math.log(2 * math.pi)) if fixed else 0.0
    model = NCEDensity(d_in, width, noise_std, c_init)
    A = torch.randn(d_in, d_in, generator=g) / d_in ** 0.5
    batches = []
    for _ in range(steps):
        x_data = torch.tanh(torch.randn(bs, d_in, generator=g) @ A) * 1.5
        x_noise = noise_std * torch.randn(bs, d_in, generator=g)
        labels = torch.cat([torch.ones(bs), torch.zeros(bs)])
        batches.append(((x_data, x_noise), labels))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(), batches=batches, steps=steps)
