"""Battery-management state-of-charge estimator: a GRU over a window of cell measurements
(terminal voltage, current, cell temperature, standardised) whose per-step hidden states are
pooled over time and mapped by a Linear + sigmoid to SOC in [0, 1], MSE loss, SGD with
momentum.

Mechanism: the temporal pooling is a *sum* over the 100-200 time steps of the window (the
author wanted "more evidence for longer windows").  The GRU states are bounded in [-1, 1] but
strongly correlated in time (the inputs are the voltage above the 3.0 V cut-off and a
discharge-dominated current, both with a large DC component), so the pooled vector has
entries of order T/3 and the head's pre-activation is of order +-10..+-40 from step 0.  The
output sigmoid is saturated at 0 or 1 for nearly every window; with MSE the gradient carries a
factor sigmoid'(z) ~ e^-|z| and vanishes, so the SOC error stays where it started
(no inf/NaN - a stall).

ORIGIN: ``head`` - the output Linear + sigmoid, where the saturated pre-activation is formed
(the GRU itself is healthy).

Fix: mean pooling over time (pre-activations of order 1); same model, data, optimiser, steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "head"
SOURCE = ("Known pattern: sum pooling over long sequences feeding a sigmoid output trained with "
          "MSE -> saturated output, vanishing gradient (sigmoid + MSE gradient carries "
          "sigma'(z)); data-driven SOC estimation with RNNs (Chemali et al. 2018, LSTM SOC)")


class SocHead(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc = nn.Linear(hidden, 1)

    def forward(self, z):
        return torch.sigmoid(self.fc(z)).squeeze(-1)


class SocGRU(nn.Module):
    def __init__(self, hidden, pool):
        super().__init__()
        self.gru = nn.GRU(3, hidden, batch_first=True)
        self.pool = pool
        self.head = SocHead(hidden)

    def forward(self, x):
        h, _ = self.gru(x)
        z = h.sum(1) if self.pool == "sum" else h.mean(1)
        return self.head(z)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 24, 48][seed % 3]
    T = [120, 160, 100][seed % 3]
    lr = [0.3, 0.2, 0.25][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 120
    model = SocGRU(hidden, "mean" if fixed else "sum")

    batches = []
    for _ in range(steps):
        soc0 = torch.rand(bs, 1, generator=g) * 0.8 + 0.1
        # discharge-dominated drive cycle current (C-rate), positive mean
        cur = 0.5 + torch.randn(bs, T, generator=g) * 0.4 + 0.3 * torch.sin(torch.linspace(0, 6, T))[None]
        soc = soc0 - 0.0005 * torch.cumsum(cur, 1)
        ocv = 3.3 + 0.8 * soc + 0.1 * torch.tanh(8 * (soc - 0.1))
        # voltage above the 3.0 V cut-off, in V
        volt = ocv - 0.05 * cur + 0.01 * torch.randn(bs, T, generator=g) - 3.0
        temp = torch.randn(bs, 1, generator=g).expand(bs, T) * 0.5
        x = torch.stack([volt, cur, temp], -1)
        batches.append((x, soc[:, -1].clamp(0.02, 0.98)))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
