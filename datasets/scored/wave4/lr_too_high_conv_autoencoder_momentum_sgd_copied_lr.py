"""A small 1-D convolutional autoencoder for synthetic sensor windows is trained with SGD +
momentum 0.9 at an lr copied from a classification tutorial that used plain SGD on a normalised
cross-entropy; with momentum and a summed-over-time MSE the effective step is far too large, the
first updates overshoot, weights grow every step and the loss explodes to inf/NaN within a few
dozen steps. Fixed: a 50-100x smaller lr, everything else identical."""
import torch, torch.nn as nn
CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Known pattern: momentum SGD with an lr tuned for a different loss scale diverging (CS231n 'babysitting the learning process')"

class ConvAE(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv1d(1, c, 5, padding=2), nn.ReLU(), nn.Conv1d(c, c, 5, stride=2, padding=2), nn.ReLU())
        self.dec = nn.Sequential(nn.ConvTranspose1d(c, c, 4, stride=2, padding=1), nn.ReLU(), nn.Conv1d(c, 1, 5, padding=2))
    def forward(self, x):
        return self.dec(self.enc(x))

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [8, 12, 16][seed % 3]; L = 64
    model = ConvAE(c)
    steps = [80, 100, 120][seed % 3]; bs = [16, 32, 24][seed % 3]
    t = torch.linspace(0, 1, L)
    batches = []
    for _ in range(steps):
        f = 2 + 6 * torch.rand(bs, 1, generator=g); ph = 6.28 * torch.rand(bs, 1, generator=g)
        x = (torch.sin(6.28 * f * t + ph) + 0.1 * torch.randn(bs, L, generator=g)).unsqueeze(1)
        batches.append((x, x))
    lr = [2e-3, 1e-3, 1.5e-3][seed % 3] if fixed else [0.15, 0.1, 0.12][seed % 3]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    def loss_fn(out, y):
        return ((out - y) ** 2).sum(-1).mean()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
