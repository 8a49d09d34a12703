"""Solubility regressor (ESOL-style): an MLP on standardised RDKit-like descriptors predicting
standardised logS. One shard merged from another lab reported solubility in micromol/L (raw, not
log) and was standardised with the main set's statistics, so one batch early in training carries
finite targets in the thousands. Nothing becomes NaN: Adam takes a few large steps toward the
absurd targets and its second-moment estimate v is inflated by ~1e6; with beta2=0.999 it stays
inflated for hundreds of steps, so afterwards every normal gradient is divided by a huge sqrt(v)
and the model is frozen at a worse-than-initial loss. The run stalls.
ORIGIN: None (corrupt data batch, not a module). Fix: drop/convert the mis-unit batch."""
import torch, torch.nn as nn
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "QSAR/solubility pipelines mixing mol/L and umol/L units; Adam second-moment wreck after one outlier batch"
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    d, h, bs, steps, lr, bad = [(20, 64, 32, 100, 3e-3, 2), (32, 128, 64, 120, 2e-3, 3), (16, 48, 48, 90, 5e-3, 1)][seed]
    model = nn.Sequential(nn.Linear(d, h), nn.SiLU(), nn.Linear(h, h), nn.SiLU(), nn.Linear(h, 1), nn.Flatten(0))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    w = torch.randn(d, generator=g); v = torch.randn(d, generator=g)
    batches = []
    for i in range(steps):
        x = torch.randn(bs, d, generator=g)
        y = torch.tanh(x @ w / d ** .5) * 1.2 + 0.5 * torch.sin(x @ v / d ** .5)
        y = (y + 0.1 * torch.randn(bs, generator=g)) / 0.9
        if i == bad and not fixed:
            y = 10 ** (0.5 * y + 4.0)
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
