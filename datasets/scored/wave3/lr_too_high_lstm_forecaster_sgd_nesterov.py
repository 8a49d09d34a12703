"""Seq-to-one LSTM forecaster (LSTM over a window of z-scored lags, linear head predicting the next
H values) trained with SGD + Nesterov momentum 0.9.  The recipe it was ported from summed the loss
over the batch with lr=0.25; here the loss is a mean and the lr was "linearly scaled" by the batch size
to 8-10, with no gradient clipping.  The momentum-amplified steps give update/weight ratios far above
1e-3 on the head and the LSTM weights: the forecast oscillates with growing amplitude and the MSE
overflows to inf/NaN within a few dozen steps.  Fixed: lr=0.1."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Linear lr-scaling rule misapplied when porting a summed-loss SGD recipe to a mean-reduced loss (forecasting LSTM, no clipping)"


class Forecaster(nn.Module):
    def __init__(self, hidden, horizon, layers):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, x):
        h, _ = self.lstm(x.unsqueeze(-1))
        return self.head(h[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    hidden, layers, bs, bad_lr, steps, win = [(32, 1, 32, 8.0, 100, 24), (24, 2, 48, 10.0, 80, 20), (48, 1, 24, 8.0, 120, 30)][seed % 3]
    horizon = 6
    model = Forecaster(hidden, horizon, layers)
    opt = torch.optim.SGD(model.parameters(), lr=0.1 if fixed else bad_lr, momentum=0.9, nesterov=True)
    batches = []
    for _ in range(steps):
        phase = torch.rand(bs, 1, generator=g) * 6.283
        per = 8 + 8 * torch.rand(bs, 1, generator=g)
        t = torch.arange(win + horizon, dtype=torch.float32)[None]
        s = torch.sin(6.283 * t / per + phase) + 0.1 * torch.randn(bs, win + horizon, generator=g)
        batches.append((s[:, :win], s[:, win:]))
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.mse_loss(o, y), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
