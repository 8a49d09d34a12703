"""A small MLP regressor for a synthetic assay score is trained with a hand-written Pearson
correlation loss, 1 - cov(p, t) / (std(p) * std(t)), computed per batch as tutorials on
"correlation losses" show, without an epsilon. Mid-run one batch comes from a plate where every
measurement was clipped to the same detection limit, so the targets in that batch are all equal:
std(t) = 0 and cov = 0, giving 0/0 = NaN in the forward and NaN gradients that poison every weight;
all later losses are NaN. Fixed: the same loss with an epsilon in the denominator
(cov / (std_p * std_t + eps)), which gives a finite, zero-gradient value on that batch."""
import torch, torch.nn as nn
CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = "Known pattern: Pearson-correlation / CCC losses dividing by a batch std without eps (NaN on constant-target batches)"

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = [10, 16, 12][seed % 3]; h = [32, 64, 48][seed % 3]
    model = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh(), nn.Linear(h, 1), nn.Flatten(0))
    w = torch.randn(d, generator=g)
    steps = [100, 140, 120][seed % 3]; bs = [32, 16, 24][seed % 3]
    const_step = [35, 60, 80][seed % 3]
    batches = []
    for s in range(steps):
        x = torch.randn(bs, d, generator=g)
        y = torch.sin(x @ w / 2) + 0.1 * torch.randn(bs, generator=g)
        if s == const_step:
            y = torch.full((bs,), -1.25)
        batches.append((x, y))
    eps = 1e-6 if fixed else 0.0
    def loss_fn(p, t):
        pc, tc = p - p.mean(), t - t.mean()
        cov = (pc * tc).mean()
        sd = pc.pow(2).mean().sqrt() * tc.pow(2).mean().sqrt()
        return 1 - cov / (sd + eps)
    opt = torch.optim.RMSprop(model.parameters(), lr=[1e-3, 2e-3, 1.5e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
