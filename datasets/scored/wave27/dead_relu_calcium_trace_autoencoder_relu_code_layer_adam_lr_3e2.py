"""Two-photon calcium imaging: a dense autoencoder compresses 2 s windows of dF/F traces (z-scored per ROI) from a
population of ROIs into a small code (a "latent population state") and reconstructs them, trained
with an L1 (robust) reconstruction loss and Adam.

Mechanism: the code layer is a ReLU (the practitioner wanted non-negative, "rate-like" latents)
and Adam runs at lr=3e-2 to 4e-2 (taken from a tutorial on a toy dataset). Adam's normalised steps move
every bias and weight by ~lr per step regardless of the gradient size; in the first tens of steps
the code units overshoot to negative pre-activations on every window. A dead code unit has zero
gradient, so Adam's first moment decays and it never revives. Once the few code units are dead the
decoder sees a constant code and can only output the mean trace: the L1 loss plateaus at the
mean-prediction level (a stall, no non-finite value), while a LeakyReLU code keeps a gradient
path and the autoencoder learns.

ORIGIN: "code_act", the ReLU applied to the code (fed by the code Linear "encoder.2"). The code
layer is the bottleneck whose units die first and completely; everything downstream only sees its
zeros.

Fix: LeakyReLU(0.1) on the code layer (the catalogue's activation fix); model width, data,
optimiser, lr and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "code_act"
SOURCE = ("Dying-ReLU bottleneck in autoencoders (Lu et al. 2019 'Dying ReLU and initialization'; "
          "StackOverflow 'autoencoder outputs the same image for every input / latent all "
          "zeros'); Adam lr of a few 1e-2 copied from toy examples; calcium population autoencoders as in "
          "Pandarinath et al. 2018 / CaImAn-style dF/F preprocessing")


class TraceAE(nn.Module):
    def __init__(self, n_in, hidden, code):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, code))
        self.code_act = None
        self.decoder = nn.Sequential(nn.Linear(code, hidden), nn.ReLU(), nn.Linear(hidden, n_in))

    def forward(self, x):
        return self.decoder(self.code_act(self.encoder(x)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_roi, T = 12, 20  # 12 ROIs x 20 frames (10 Hz)
    hidden = [128, 96, 160][seed % 3]
    code = [4, 3, 5][seed % 3]
    batch = [64, 32, 48][seed % 3]
    lr = [0.03, 0.04, 0.035][seed % 3]
    steps = 200

    # low-dimensional latent drive -> spikes -> calcium kernel -> dF/F + shot noise
    load = torch.rand(n_roi, code, generator=g) * 2
    kern = torch.exp(-torch.arange(8) / 4.0)
    torch.manual_seed(seed)
    model = TraceAE(n_roi * T, hidden, code)
    model.code_act = nn.LeakyReLU(0.1) if fixed else nn.ReLU()

    batches = []
    for _ in range(steps):
        z = torch.relu(torch.cumsum(0.6 * torch.randn(batch, code, T, generator=g), -1))
        rate = torch.einsum("rc,bct->brt", load, z)
        spikes = torch.poisson(0.3 * rate, generator=g)
        ca = torch.nn.functional.conv1d(
            nn.functional.pad(spikes.reshape(-1, 1, T), (7, 0)), kern.flip(0).view(1, 1, -1))
        dff = ca.reshape(batch, n_roi, T) + 0.2 * torch.randn(batch, n_roi, T, generator=g)
        batches.append(dff)
    # z-score each ROI with session statistics (standard before population models)
    allx = torch.cat(batches)
    mu, sd = allx.mean((0, 2), keepdim=True), allx.std((0, 2), keepdim=True)
    batches = [((b - mu) / sd).reshape(b.shape[0], -1) for b in batches]
    batches = [(x, x.clone()) for x in batches]

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": nn.L1Loss(), "batches": batches,
            "steps": steps}
