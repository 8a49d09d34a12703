"""ABR/QoE analytics: a GRU reads the per-chunk trace of a video session (throughput,
buffer level, chosen bitrate rung, download time; all standardised) and regresses the
total rebuffering time of the next 30 s window, in seconds, with MSE and SGD + momentum.

Mechanism: the telemetry pipeline merges logs from several player builds.  One shard
(one batch, at a seed-dependent step in the middle of training) comes from a build
that reports rebuffer duration in milliseconds, so its targets are 1000x too large.
The MSE on that batch is ~1e5-1e6x the normal loss; its gradient throws the head and GRU
weights far out (the momentum buffer keeps pushing for ~10 more steps), the GRU gates
saturate and the loss jumps by four orders of magnitude.  It never gets back: at the
end of the run the loss is still thousands of times the pre-outlier level (no NaN).
The data are otherwise clean and the run is calm until that batch.

ORIGIN: None -- the corruption is in the targets, so no module is where it starts
(the loss, not a layer, first sees the bad values).

Fix: validate units at ingestion -- the corrupt shard is detected by its range and
converted back to seconds (divide by 1000); the model, optimiser and step count are
unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Mixed-unit player telemetry (seconds vs milliseconds) in video QoE datasets, e.g. "
          "the Puffer / Pensieve trace pipelines and MLOps reports of 'one shard in ms blew up "
          "training'; the classic 'a single batch with huge targets makes the loss NaN' forum thread.")

N_FEAT = 4


class RebufferGRU(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.gru = nn.GRU(N_FEAT, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1])


def _sessions(g, n, T):
    thr = torch.randn(n, 1, generator=g) + 0.3 * torch.randn(n, T, generator=g)
    buf = torch.cumsum(0.2 * thr, 1) / T ** 0.5 + 0.3 * torch.randn(n, T, generator=g)
    rung = (thr + 0.5 * torch.randn(n, T, generator=g)).clamp(-2, 2)
    dl = rung - thr + 0.2 * torch.randn(n, T, generator=g)
    x = torch.stack([thr, buf, rung, dl], -1)
    reb = torch.nn.functional.softplus(2.0 * (dl[:, -5:].mean(1) - buf[:, -1])) * 1.5
    return x, reb.unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    hidden = [32, 48, 24][seed % 3]
    lr = [0.02, 0.01, 0.03][seed % 3]
    bs = [32, 64, 48][seed % 3]
    T = [20, 16, 24][seed % 3]
    steps = 150
    bad_step = [70, 95, 52][seed % 3]

    model = RebufferGRU(hidden)
    batches = []
    for t in range(steps):
        x, y = _sessions(g, bs, T)
        if t == bad_step:
            y = y * 1000.0  # shard from the build that logs rebuffer in ms
            if fixed and y.max() > 120.0:  # unit check at ingestion: a 30 s window
                y = y / 1000.0               # cannot hold > 120 s of rebuffering
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
