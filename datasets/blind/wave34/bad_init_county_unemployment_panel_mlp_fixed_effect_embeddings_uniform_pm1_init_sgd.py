"""County-by-month unemployment-rate panel forecaster: county fixed-effect embedding plus 12
standardised lags of the county rate and 6 national indicators, fed to a deep ReLU MLP, MSE on
the standardised next-month rate, plain SGD.

Mechanism (bad_init). A helper `init_weights` written for a tiny 2-layer net draws every Linear
weight from U(-1, 1) (`nn.init.uniform_(w, -1, 1)`). The variance of U(-1,1) is 1/3, so each
ReLU layer of width w multiplies the activation scale by ~sqrt(w/6) (4-6.5 for w = 96-256).
Over 4-6 hidden layers the forecast starts at 1e3-1e5 standard deviations, the MSE at 1e7-1e10,
and the first SGD step (gradients scale with the same product) throws the weights to values
whose next forward pass overflows: the loss is inf/NaN within a few steps.

ORIGIN = "mlp.0": the first Linear of the MLP, where the geometric growth starts (the embedding
table keeps PyTorch's N(0,1) default and is not where the blow-up begins).

Fix: Kaiming (He) normal initialisation for the ReLU layers and zero biases; everything else
(data, widths, depth, lr, batches) unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "mlp.0"
SOURCE = ("Uniform(-1,1) weight init carried over from small-net tutorials; exploding activations "
          "with depth (He et al. 2015, 'Delving deep into rectifiers'); PyTorch forum threads on "
          "'loss is nan after first iteration' with custom init_weights")


class PanelMLP(nn.Module):
    def __init__(self, n_units, d_emb, d_in, width, depth):
        super().__init__()
        self.fe = nn.Embedding(n_units, d_emb)
        layers, d = [], d_in + d_emb
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, unit, x):
        h = torch.cat([self.fe(unit) * 0.1, x], dim=1)
        return self.mlp(h).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [4, 5, 6][seed % 3]
    width = [128, 96, 192][seed % 3]
    lr = [0.01, 0.005, 0.02][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 120
    n_units, d_emb, L, M = 300, 8, 12, 6

    model = PanelMLP(n_units, d_emb, L + M, width, depth)
    for m in model.mlp:
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.uniform_(m.weight, -1.0, 1.0)
            nn.init.zeros_(m.bias)

    alpha = 0.5 * torch.randn(n_units, generator=g)          # county fixed effects
    rho = torch.linspace(0.6, 0.02, L)
    gamma = torch.randn(M, generator=g) * 0.3

    def sample(n):
        unit = torch.randint(0, n_units, (n,), generator=g)
        lags = torch.randn(n, L, generator=g)
        macro = torch.randn(n, M, generator=g)
        y = alpha[unit] + lags @ rho * 0.8 + macro @ gamma + 0.3 * torch.randn(n, generator=g)
        return (unit, torch.cat([lags, macro], 1)), y

    batches = [sample(bs) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
