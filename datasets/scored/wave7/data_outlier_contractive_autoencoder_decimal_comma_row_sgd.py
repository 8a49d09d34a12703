"""Contractive autoencoder (Rifai et al. 2011) used for anomaly scoring of standardised lab-panel
features: ReLU encoder to a 4-d code, linear decoder, loss = reconstruction MSE + lambda *
||dh/dx||_F^2 (closed form for the one-layer encoder), optimised with SGD + momentum. One export
file was written with a German locale and three decimals, so every value of that row ("1,037") was
parsed as thousands (1037) instead of 1.037; after standardisation with the clean statistics the row
sits at ~3000-15000 sigma and lands in the batch of step 40, mid-run. Its squared reconstruction error is
~1e7-1e8 times that of a normal row, the SGD step on that batch throws the encoder and decoder weights
far out, momentum carries the overshoot on, and within a few steps the loss is inf/NaN. Fix: drop
the corrupt row (range check on the standardised features) from that batch; nothing else changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "enc"
SOURCE = ("Rifai et al. 2011 contractive autoencoders; locale decimal-comma CSV parsing bug "
          "('1,037' -> 1037) producing one extreme row in otherwise clean tabular data")

D, CODE, LAM = 16, 4, 0.05


class ContractiveAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(D, CODE)
        self.dec = nn.Linear(CODE, D)

    def forward(self, x):
        a = self.enc(x)
        h = F.relu(a)
        # Jacobian of relu(Wx+b) is diag(1[a>0]) W  ->  ||J||_F^2 = sum_j 1[a_j>0] ||W_j||^2
        jac = ((a > 0).float() * self.enc.weight.pow(2).sum(1)).sum(1)
        return {"recon": self.dec(h), "jac_fro2": jac}


def cae_loss(out, x):
    return F.mse_loss(out["recon"], x) + LAM * out["jac_fro2"].mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n, bs, steps = 8192, 128, 200
    latent = torch.randn(n, 3, generator=g)
    mix = torch.randn(3, D, generator=g)
    raw = 1.0 + 0.3 * torch.tanh(latent @ mix / 1.5) + 0.03 * torch.randn(n, D, generator=g)
    mean, std = raw.mean(0), raw.std(0)
    X = (raw - mean) / std
    batches = []
    for step in range(steps):
        idx = torch.randint(0, n, (bs,), generator=g)
        xb = X[idx].clone()
        if step == 40:
            xb[17] = (raw[idx[17]] * 1000.0 - mean) / std   # the decimal-comma row
            if fixed:
                xb = xb[(xb.abs() < 50).all(dim=1)]
        batches.append((xb, xb))
    model = ContractiveAE()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=cae_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
