"""Dense (soft) mixture-of-experts regressor for customer lifetime value: a softmax gating network
and 4-6 small expert MLPs all read the same tabular features; the prediction is the gate-weighted
sum of the expert outputs and the target is a z-scored log-spend. The features are passed raw:
annual income in dollars (1e4-2e5), account age in days (0-4000), monthly sessions (0-300) and a
few binary flags. The gate logits are in the thousands, so the softmax is an exact one-hot that
flips arbitrarily between experts, and the experts' first layers see inputs of 1e5: the initial
MSE is ~1e6 instead of ~1, the first-layer gradients (input x error) are ~1e8 or more, and the first
SGD-momentum steps overshoot until the expert outputs and the loss explode (1e20 and beyond, or
inf/NaN). Fixed: the numeric features are standardised
(z-scored) before entering the model; the same model, optimiser and target."""
import torch, torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "gate"
SOURCE = "MoE / MMoE tabular recommenders fed raw numeric features; 'softmax gate collapses to one expert, loss explodes' reports; sklearn StandardScaler advice"

class SoftMoE(nn.Module):
    def __init__(self, d, n_exp, hid):
        super().__init__()
        self.gate = nn.Linear(d, n_exp)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, hid), nn.ReLU(), nn.Linear(hid, 1)) for _ in range(n_exp)])
    def forward(self, x):
        w = torch.softmax(self.gate(x), -1)
        out = torch.cat([e(x) for e in self.experts], -1)
        return {"pred": (w * out).sum(-1), "gate": w}

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(131 + seed)
    n_exp, hid, bs, lr, steps = [(4, 32, 128, 0.02, 120), (6, 24, 64, 0.01, 100), (5, 48, 256, 0.03, 150)][seed]
    n = bs * 10
    income = 1e4 + 1.9e5 * torch.rand(n, generator=g) ** 2
    age = 4000 * torch.rand(n, generator=g)
    sess = torch.poisson(40 * torch.rand(n, generator=g) + 1, generator=g)
    flags = (torch.rand(n, 3, generator=g) < 0.4).float()
    x = torch.cat([income[:, None], age[:, None], sess[:, None], flags], 1)
    y = torch.log(income) * 0.5 + 0.3 * torch.log1p(sess) + 0.0002 * age + flags @ torch.tensor([0.3, -0.2, 0.5]) \
        + 0.4 * torch.tanh(sess / 30 - age / 2000) + 0.1 * torch.randn(n, generator=g)
    y = (y - y.mean()) / y.std()
    if fixed:
        x = (x - x.mean(0)) / x.std(0)
    data = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(10)]
    batches = [data[i % 10] for i in range(steps)]
    model = SoftMoE(x.shape[1], n_exp, hid)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, t: ((out["pred"] - t) ** 2).mean(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
