"""A beginner's sparse autoencoder (ReLU code layer, wider than the input, with an L1 penalty on the
code activations as in the UFLDL tutorial) is trained with Adam on synthetic data made of a few
sparse sources. By design a large share of the code activations (a third or more) are exactly 0 on
any given sample, so the fraction of zero ReLU outputs is high and many per-sample weight-row
gradients are exactly zero: it looks like dying ReLUs, but the units still fire on the samples
that need them and the reconstruction + penalty loss keeps decreasing. Healthy."""
import torch, torch.nn as nn
CAUSE = "healthy"
ORIGIN = None
SOURCE = "Andrew Ng's UFLDL sparse autoencoder notes; Keras 'Building Autoencoders' activity_regularizer L1 example"

class SparseAE(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.enc = nn.Linear(d, h); self.code = nn.ReLU(); self.dec = nn.Linear(h, d)
    def forward(self, x):
        c = self.code(self.enc(x))
        return {"recon": self.dec(c), "code": c}

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = [20, 16, 24][seed % 3]; h = [64, 48, 80][seed % 3]; lam = [1e-3, 2e-3, 5e-4][seed % 3]
    model = SparseAE(d, h)
    atoms = torch.randn(30, d, generator=g)
    steps = [150, 200, 120][seed % 3]; bs = [64, 32, 48][seed % 3]
    batches = []
    for _ in range(steps):
        a = torch.rand(bs, 30, generator=g) * (torch.rand(bs, 30, generator=g) < 0.1)
        x = a @ atoms
        batches.append((x, x))
    def loss_fn(out, x):
        return ((out["recon"] - x) ** 2).mean() + lam * out["code"].abs().sum(1).mean()
    opt = torch.optim.Adam(model.parameters(), lr=[3e-3, 2e-3, 4e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
