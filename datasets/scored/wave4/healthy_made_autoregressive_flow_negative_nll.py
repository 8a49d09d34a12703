"""Masked autoregressive flow (MAF, Papamakarios et al. 2017) built from one MADE layer with
Gaussian conditionals, fitted by maximum likelihood on 2-D data lying close to a thin curve. The
per-dimension log-scales become strongly negative as the model concentrates its density, so the
negative log-likelihood goes below zero and keeps decreasing: a negative, ever-falling loss is what a
good density model on a continuous, concentrated distribution produces, not a bug."""
import torch, torch.nn as nn, math
CAUSE = "healthy"
ORIGIN = None
SOURCE = "MAF (Papamakarios et al. 2017) / MADE (Germain et al. 2015); negative NLL on continuous data is normal"
class MaskedLinear(nn.Linear):
    def __init__(s, i, o, mask): super().__init__(i, o); s.register_buffer("mask", mask)
    def forward(s, x): return nn.functional.linear(x, s.weight * s.mask, s.bias)
class MADE(nn.Module):
    def __init__(s, h):
        super().__init__()
        deg_h = torch.ones(h)  # hidden units see x1 only (D=2)
        m1 = (deg_h[:, None] >= torch.tensor([1.0, 2.0])[None, :]).float()
        m2 = (torch.tensor([1.0, 2.0])[:, None] > deg_h[None, :]).float().repeat(2, 1)
        s.l1 = MaskedLinear(2, h, m1); s.act = nn.Tanh(); s.l2 = MaskedLinear(h, 4, m2)
    def forward(s, x):
        mu, logs = s.l2(s.act(s.l1(x))).chunk(2, -1)
        return {"u": (x - mu) * torch.exp(-logs), "logs": logs}
def nll(o, y):
    u, logs = o["u"], o["logs"]
    return (0.5 * u ** 2 + 0.5 * math.log(2 * math.pi) + logs).sum(-1).mean()
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    h = 32 + 16 * seed; steps, bs = 250, 128; noise = [0.05, 0.03, 0.08][seed]
    model = MADE(h)
    batches = []
    for _ in range(steps):
        x1 = torch.randn(bs, generator=g) * 0.5
        x2 = torch.sin(3.0 * x1) + noise * torch.randn(bs, generator=g)
        batches.append((torch.stack([x1, x2], -1), None))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nll, batches=batches, steps=steps, amp_dtype=None, scaler=None)
