"""Latent population dynamics (LFADS-lite, deterministic): a bidirectional-GRU encoder summarises a
trial of binned spike counts from 40 neurons into an initial condition, a generator GRU unrolls the
latent dynamics, and a linear readout gives log firing rates; trained with the Poisson NLL
(log-rate input) and RMSprop.

Mechanism: RMSprop at lr=0.03-0.08 (the practitioner reused the lr of a small feed-forward GLM
fit). RMSprop normalises each parameter's step by its running RMS gradient, so every weight moves
by ~lr per step whatever the loss; for recurrent weights that is far too much (update/weight
ratios ~1e-1 instead of ~1e-3). The generator GRU's gates are flung into saturation and the
log-rate readout jumps between over- and under-prediction by many nats; the loss never settles
below its early value (a stall far above the starting loss) and, depending on the seed, exp() of
the overshooting log rates inside the Poisson NLL overflows to inf. The same model at lr=2e-3
learns the latent dynamics.

ORIGIN: None (lr_too_high: the optimiser setting, not a module, is the cause).

Fix: lr = 2e-3; model, data, optimiser type and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("LFADS (Pandarinath et al. 2018) / NDT benchmarks train with Adam-type lr ~1e-3 to 1e-2 "
          "with gradient clipping; RMSprop lr copied from a GLM/MLP fit; 'RNN loss oscillates / "
          "does not decrease with RMSprop lr 0.01+' reports (Karpathy char-rnn lr guidance)")


class SeqAutoencoder(nn.Module):
    def __init__(self, n_neurons, enc, gen, fac):
        super().__init__()
        self.encoder = nn.GRU(n_neurons, enc, batch_first=True, bidirectional=True)
        self.to_ic = nn.Linear(2 * enc, gen)
        self.generator = nn.GRU(1, gen, batch_first=True)
        self.factors = nn.Linear(gen, fac)
        self.readout = nn.Linear(fac, n_neurons)

    def forward(self, x):
        _, h = self.encoder(torch.log1p(x))
        ic = torch.tanh(self.to_ic(torch.cat([h[0], h[1]], -1)))
        z = torch.zeros(x.shape[0], x.shape[1], 1)
        g, _ = self.generator(z, ic[None])
        return self.readout(self.factors(g))  # log rates


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    N, T = 40, 30
    enc = [32, 48, 64][seed % 3]
    gen = [48, 64, 32][seed % 3]
    fac = [6, 8, 5][seed % 3]
    batch = [32, 48, 24][seed % 3]
    lr = 2e-3 if fixed else [0.03, 0.05, 0.08][seed % 3]
    steps = 150

    # ground truth: rotational 2-D latent dynamics with random initial conditions (reaching-like)
    C = torch.randn(N, 2, generator=g) * 0.8
    b = torch.log(torch.rand(N, generator=g) * 0.3 + 0.1)
    th = 0.2
    R = torch.tensor([[torch.cos(torch.tensor(th)), -torch.sin(torch.tensor(th))],
                      [torch.sin(torch.tensor(th)), torch.cos(torch.tensor(th))]]) * 0.99
    torch.manual_seed(seed)
    model = SeqAutoencoder(N, enc, gen, fac)
    batches = []
    for _ in range(steps):
        z = torch.randn(batch, 2, generator=g)
        zs = []
        for _t in range(T):
            z = z @ R.T
            zs.append(z)
        zs = torch.stack(zs, 1)
        rate = torch.exp(zs @ C.T + b)
        counts = torch.poisson(rate, generator=g)
        batches.append((counts, counts.clone()))

    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    loss_fn = nn.PoissonNLLLoss(log_input=True, full=False)
    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
