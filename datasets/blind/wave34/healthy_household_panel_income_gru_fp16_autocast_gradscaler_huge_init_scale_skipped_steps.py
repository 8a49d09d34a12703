"""Household-panel income forecaster (healthy): a GRU reads 10 waves of a household's
standardised panel record (log earnings, hours, household size, employment status, region
unemployment) from a longitudinal survey (PSID/SOEP-style) and predicts next-wave standardised
log household income; Huber loss, AdamW, mixed precision with torch.autocast(float16) and a
GradScaler.

Why it looks alarming but is healthy: the GradScaler starts at init_scale = 2**24 (a value
copied from a large-model config). At that scale the scaled float16 gradients overflow, so the
scaler finds inf gradients and SKIPS the optimiser step, halving the scale each time: the first
several steps have exactly unchanged weights and identical-looking losses, and a float16
overflow is reported internally. This is the GradScaler working as designed; once the scale is
small enough the steps go through and the model trains normally in mixed precision.

ORIGIN = None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("torch.amp GradScaler dynamic loss scaling: steps with inf/NaN gradients are skipped "
          "and the scale is backed off (Micikevicius et al. 2018, PyTorch AMP docs); panel-data "
          "income forecasting with RNNs on household surveys")


class PanelGRU(nn.Module):
    def __init__(self, d_in, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(d_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h[:, -1]).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 96, 128][seed % 3]
    steps = 150
    T, D = 10, 5

    model = PanelGRU(D, hidden, layers)

    def sample(n):
        perm = 0.5 * torch.randn(n, 1, generator=g)                  # permanent income
        shocks = torch.randn(n, T + 1, generator=g) * 0.3
        ar = torch.zeros(n, T + 1)
        for t in range(1, T + 1):
            ar[:, t] = 0.8 * ar[:, t - 1] + shocks[:, t]
        inc = perm + ar
        other = torch.randn(n, T, D - 1, generator=g)
        x = torch.cat([inc[:, :T, None], other], 2)
        y = inc[:, T] + 0.1 * other[:, -1, 0]
        return x, y

    batches = [sample(bs) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(delta=1.0), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=scaler)
