"""Tabular autoencoder for card-fraud anomaly detection (30 standardised features -> ReLU encoder
-> narrow ReLU bottleneck -> decoder). The Adam lr (0.15-0.3) was copied from a recipe that used a
long linear warmup, but here Adam runs at full lr from step 0. Adam's first updates move every
parameter by ~lr regardless of gradient size, the few bottleneck units are pushed negative for all
rows and die; the decoder then outputs a constant and reconstruction MSE sits flat at ~1.
ORIGIN: enc.3 (the bottleneck ReLU). Fix: an lr that fits training without warmup (3e-3)."""
import torch, torch.nn as nn
CAUSE = "dead_relu"
ORIGIN = "enc.3"
SOURCE = "Kaggle credit-card fraud autoencoder notebooks; Adam lr copied from warmup schedules"
class AE(nn.Module):
    def __init__(s, d, h, k):
        super().__init__()
        s.enc = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, k), nn.ReLU())
        s.dec = nn.Sequential(nn.Linear(k, h), nn.ReLU(), nn.Linear(h, d))
    def forward(s, x): return s.dec(s.enc(x))
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    d, h, k, bs, steps, lr = [(30, 32, 4, 64, 120, 0.2), (24, 48, 3, 128, 100, 0.3), (30, 24, 6, 32, 150, 0.15)][seed]
    model = AE(d, h, k)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else lr)
    A = torch.randn(k, d, generator=g)
    batches = []
    for _ in range(steps):
        z = torch.randn(bs, k, generator=g); x = z @ A / k ** .5 + 0.3 * torch.randn(bs, d, generator=g)
        batches.append((x, x))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
