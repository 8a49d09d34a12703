"""Deep Koopman autoencoder (encoder -> linear latent dynamics K -> decoder) trained on
trajectory snapshots of the Lorenz-63 system, with loss = reconstruction of x_t + prediction of
x_{t+1} through one latent Koopman step. The states are fed and regressed in raw simulator
units (x, y in +-20, z in 0..50, mean z ~ 24), not standardised. The squared errors are in the
hundreds from step 0, and the first Linear layer (`encoder.0`) gets inputs one to two orders of
magnitude larger than its init assumes, so its tanh units sit in saturation for almost every
state: the encoder output barely depends on the input, the gradient into the encoder vanishes,
and within a few momentum-SGD steps the decoder has only learnt the mean state. The loss then
hovers at the total state variance (~140) for the rest of the run - a plateau with no NaN.
The fixed run only standardises the states (per-coordinate mean/std of the training set) for
both inputs and targets; model, optimiser and lr are unchanged."""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "encoder.0"
SOURCE = ("Deep Koopman autoencoders (Lusch, Kutz & Brunton 2018, Nature Comm.; Otto & Rowley "
          "2019) on Lorenz-63; raw-unit state inputs/targets giving huge initial losses and "
          "divergence, fixed by per-variable standardisation")


class KoopmanAE(nn.Module):
    def __init__(self, d, width, latent):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d, width), nn.Tanh(), nn.Linear(width, width),
                                     nn.Tanh(), nn.Linear(width, latent))
        self.K = nn.Linear(latent, latent, bias=False)
        self.decoder = nn.Sequential(nn.Linear(latent, width), nn.Tanh(), nn.Linear(width, d))
        with torch.no_grad():
            self.K.weight.copy_(torch.eye(latent) + 0.01 * torch.randn(latent, latent))

    def forward(self, x_t):
        z = self.encoder(x_t)
        return {"recon": self.decoder(z), "pred": self.decoder(self.K(z))}


def lorenz(n_traj, n_steps, dt, g):
    s, r, b = 10.0, 28.0, 8.0 / 3.0
    x = torch.randn(n_traj, 3, generator=g) * 8 + torch.tensor([0.0, 0.0, 25.0])
    out = []
    for k in range(n_steps + 300):
        def f(v):
            return torch.stack([s * (v[:, 1] - v[:, 0]), v[:, 0] * (r - v[:, 2]) - v[:, 1],
                                v[:, 0] * v[:, 1] - b * v[:, 2]], 1)
        k1 = f(x); k2 = f(x + dt / 2 * k1); k3 = f(x + dt / 2 * k2); k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if k >= 300:
            out.append(x)
    return torch.stack(out, 1)          # n_traj, n_steps, 3


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(99 + seed)
    width = [48, 64, 32][seed % 3]
    latent = [8, 12, 6][seed % 3]
    batch = [64, 128, 96][seed % 3]
    steps = [150, 120, 160][seed % 3]
    lr = [0.01, 0.008, 0.01][seed % 3]

    traj = lorenz(32, 200, 0.01, g)
    X = traj[:, :-1].reshape(-1, 3)
    Y = traj[:, 1:].reshape(-1, 3)
    if fixed:
        mu, sd = X.mean(0), X.std(0)
        X, Y = (X - mu) / sd, (Y - mu) / sd

    batches = []
    for _ in range(steps):
        idx = torch.randint(0, X.shape[0], (batch,), generator=g)
        batches.append((X[idx], {"x_t": X[idx], "x_next": Y[idx]}))

    model = KoopmanAE(3, width, latent)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(out, y):
        return ((out["recon"] - y["x_t"]) ** 2).mean() + ((out["pred"] - y["x_next"]) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
