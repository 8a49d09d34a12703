"""DeepLog parameter-value anomaly model (LSTM regression) hit by an INT_MAX timeout row.

Mechanism: DeepLog (Du et al., CCS 2017) trains, per log key, an LSTM that predicts the next
parameter-value vector (elapsed ms, bytes sent, queue depth, ...) from a window of previous
ones, with an MSE loss on z-scored values. The z-score statistics come from a clean
calibration sample. One shard of the parsed logs contains a request whose elapsed time was
logged as 2147483647 ms (INT32_MAX, the service's "timed out" sentinel); after z-scoring it
is ~1e7-1e8 standard deviations. The batch that contains it has an MSE of ~1e13-1e15; its
gradient (amplified by SGD momentum over the next steps) throws the regression head and the
LSTM weights off by orders of magnitude, and the loss never comes back: it stays at 1e6-1e9
for the rest of the run, far above where it was before the corrupt batch.

ORIGIN: None: the failure is caused by one corrupt data row, not by a module.

Fix: drop the sentinel row (replace it with the parser's clean value), same run otherwise.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Du et al. 2017 'DeepLog: anomaly detection and diagnosis from system logs' "
          "parameter value model (LSTM + MSE on normalised parameter vectors); timeout "
          "sentinel INT32_MAX left in the elapsed-time column")


class ParamValueLSTM(nn.Module):
    def __init__(self, n_params, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(n_params, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, n_params)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def _series(g, n_windows, window, n_params):
    # periodic workload with correlated parameters (latency follows load)
    t0 = torch.rand(n_windows, 1, generator=g) * 100.0
    t = t0 + torch.arange(window + 1).float().unsqueeze(0)
    load = torch.sin(t / 5.0) + 0.5 * torch.sin(t / 13.0)
    cols = [load * (1.0 + 0.3 * k) + 0.1 * k for k in range(n_params)]
    raw = torch.stack(cols, dim=-1)
    raw = raw + 0.05 * torch.randn(raw.shape, generator=g)
    # raw units: elapsed ms ~ 120 +- 30, bytes ~ 4000 +- 900, ...
    scale = torch.tensor([30.0, 900.0, 4.0, 11.0, 2.5, 60.0])[:n_params]
    offset = torch.tensor([120.0, 4000.0, 12.0, 40.0, 8.0, 300.0])[:n_params]
    return raw * scale + offset


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    cfg = [
        dict(n_params=4, hidden=64, layers=2, window=10, bs=32, lr=0.05, steps=80, bad=23),
        dict(n_params=6, hidden=48, layers=1, window=8, bs=64, lr=0.08, steps=60, bad=41),
        dict(n_params=3, hidden=32, layers=2, window=12, bs=24, lr=0.03, steps=100, bad=12),
    ][seed % 3]
    P = cfg["n_params"]
    model = ParamValueLSTM(P, cfg["hidden"], cfg["layers"])

    calib = _series(g, 512, cfg["window"], P).reshape(-1, P)
    mu, sd = calib.mean(0), calib.std(0)

    batches = []
    for step in range(cfg["steps"]):
        raw = _series(g, cfg["bs"], cfg["window"], P)
        if step == cfg["bad"]:
            # one timed-out request logged with the INT32_MAX sentinel as elapsed ms
            row = int(torch.randint(0, cfg["bs"], (1,), generator=g))
            if not fixed:
                raw[row, -1, 0] = 2147483647.0
        z = (raw - mu) / sd
        batches.append((z[:, :-1].contiguous(), z[:, -1].contiguous()))

    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
