"""Autoencoder anomaly detector for network-flow records (CIC-IDS / UNSW-NB15 style tabular
features): 20 per-flow features such as total bytes, packets, flow duration in microseconds,
mean inter-arrival time and destination port are reconstructed by a 20-64-8-64-20 ReLU autoencoder
with MSE, trained with SGD on benign traffic; anomalies are later flagged by reconstruction error.
The features are fed raw: byte counts of 1e3-1e7, durations up to 1e8 us, ports up to 65535. The
reconstruction loss is ~1e13 from the very first step, the gradients are of the same order, and the
first SGD steps throw the weights to astronomically large values: the loss overflows to inf/NaN
within a few steps. The fix standardises the inputs (log1p of the heavy-tailed counts, then z-score
with the training statistics) before the same model and optimiser."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "encoder.0"
SOURCE = "CIC-IDS2017 / UNSW-NB15 flow features; common 'autoencoder loss is 1e13 / NaN' reports when flow features are not normalised"

N_FEAT, STEPS, BATCH = 20, 120, 128


class FlowAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(N_FEAT, 64), nn.ReLU(), nn.Linear(64, 8))
        self.decoder = nn.Sequential(nn.ReLU(), nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, N_FEAT))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def _flows(g, n):
    z = torch.randn(n, 4, generator=g)                                   # latent traffic profile
    mix = torch.randn(4, N_FEAT, generator=g)
    log_mag = torch.tensor([14., 12., 9., 7., 16., 13., 11., 6., 3., 2., 10., 8., 5., 4., 15., 9., 7., 6., 1., 10.5])
    raw = torch.exp(log_mag + 0.8 * (z @ mix) / 2 + 0.1 * torch.randn(n, N_FEAT, generator=g))
    raw[:, 18] = torch.randint(0, 65536, (n,), generator=g).float()      # destination port
    return raw


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17000 + seed)
    model = FlowAE()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    raw = _flows(g, 30 * BATCH)
    if fixed:
        x = torch.log1p(raw)
        x = (x - x.mean(0)) / x.std(0)
    else:
        x = raw
    batches = [(x[(i % 30) * BATCH:(i % 30 + 1) * BATCH], x[(i % 30) * BATCH:(i % 30 + 1) * BATCH]) for i in range(STEPS)]

    def loss_fn(recon, target):
        return F.mse_loss(recon, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
