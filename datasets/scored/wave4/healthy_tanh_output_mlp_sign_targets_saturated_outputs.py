"""A plain MLP with a tanh output unit (the "old-school" choice for +-1 labels) is trained with MSE
on a synthetic two-class problem whose targets are exactly -1/+1. As it learns, most outputs sit at
|tanh| > 0.99 with tanh' ~ 0 for those samples: monitors show saturated output units and vanishing
per-sample gradients, which looks like saturation, but it is simply the network being right; the
remaining gradient comes from the few misfit samples and the loss keeps decreasing. Healthy."""
import torch, torch.nn as nn
CAUSE = "healthy"
ORIGIN = None
SOURCE = "LeCun et al. 'Efficient BackProp' (tanh outputs with +-1 targets saturate on correctly classified points); classic tutorial MLPs"

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = [6, 10, 8][seed % 3]; h = [32, 48, 24][seed % 3]
    model = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh(), nn.Linear(h, 1), nn.Tanh(), nn.Flatten(0))
    w = torch.randn(d, generator=g)
    steps = [150, 120, 200][seed % 3]; bs = [32, 64, 48][seed % 3]
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d, generator=g)
        y = torch.sign(x @ w + 0.5 * x[:, 0] * x[:, 1])
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=[1e-2, 5e-3, 8e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
