"""LFADS-lite sequential VAE on multi-neuron spike trains (Pandarinath et al. 2018, simplified):
a unidirectional GRU encoder reads the binned spike counts of a trial, outputs a Gaussian
posterior over the generator's initial state g0; a GRU generator unrolls from g0 without inputs,
low-dimensional factors are read out and mapped to per-neuron log-rates. Loss = Poisson NLL
(nn.PoissonNLLLoss(log_input=True, full=False), summed over time bins and neurons, averaged over
trials) + beta(step) * KL, with the usual linear KL warm-up from 0 to 1.

Why it is healthy although a naive monitor would flag it: the loss is large in magnitude
(thousands of nats per trial) and *negative* (full=False drops the log(y!) term, so the Poisson
term is exp(eta) - y*eta, negative for counts above e); during the KL warm-up the loss can rise
for a while as beta grows, and it is noisy from trial to trial. The model is learning the latent
dynamics throughout (the reconstruction term keeps dropping), nothing saturates or diverges.

ORIGIN = None (healthy).
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Pandarinath et al. 2018 LFADS (Nature Methods); Poisson log-likelihood without the "
          "log y! constant and KL warm-up as in the LFADS / lfads-torch code bases")


class LFADSLite(nn.Module):
    def __init__(self, n, hid, z, f):
        super().__init__()
        self.encoder = nn.GRU(n, hid, batch_first=True)
        self.to_post = nn.Linear(hid, 2 * z)
        self.g0 = nn.Linear(z, hid)
        self.generator = nn.GRUCell(1, hid)
        self.factors = nn.Linear(hid, f)
        self.logrates = nn.Linear(f, n)

    def forward(self, spikes):
        B, T, _ = spikes.shape
        _, hT = self.encoder(spikes)
        mu, logvar = self.to_post(hT[0]).chunk(2, -1)
        eps = torch.randn_like(mu)
        z = mu + torch.exp(0.5 * logvar) * eps
        h = torch.tanh(self.g0(z))
        zero = torch.zeros(B, 1)
        out = []
        for _ in range(T):
            h = self.generator(zero, h)
            out.append(self.logrates(self.factors(h)))
        return torch.stack(out, 1), mu, logvar


def make_loss(warmup):
    pois = nn.PoissonNLLLoss(log_input=True, full=False, reduction="sum")
    state = {"step": 0}

    def loss_fn(out, spikes):
        logr, mu, logvar = out
        B = spikes.shape[0]
        beta = min(1.0, state["step"] / warmup)
        state["step"] += 1
        rec = pois(logr, spikes) / B
        kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum() / B
        return rec + beta * kl
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(19000 + seed)
    n = [40, 32, 48][seed % 3]
    hid = [64, 48, 64][seed % 3]
    bs = [32, 24, 32][seed % 3]
    lr = [5e-3, 6e-3, 4e-3][seed % 3]
    T, steps = 40, 150
    C = torch.randn(2, n, generator=g) * 0.8
    b = math.log(2.5) + 0.3 * torch.randn(n, generator=g)
    batches = []
    for _ in range(steps):
        # latent: rotational dynamics (a 2-D oscillator) from a random initial condition
        phase = torch.rand(bs, 1, generator=g) * 2 * math.pi
        amp = 0.5 + torch.rand(bs, 1, generator=g)
        t = torch.arange(T).float()[None, :] * 0.25
        lat = torch.stack([amp * torch.cos(t + phase), amp * torch.sin(t + phase)], -1)
        rates = torch.exp(lat @ C + b)
        batches.append((torch.poisson(rates, generator=g), None))
    batches = [(x, x) for x, _ in batches]
    torch.manual_seed(seed)
    model = LFADSLite(n, hid, 8, 4)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(60), batches=batches, steps=steps)
