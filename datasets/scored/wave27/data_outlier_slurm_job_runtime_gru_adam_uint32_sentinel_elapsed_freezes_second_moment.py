"""Batch-scheduler job-runtime predictor: a GRU reads the sequence of a user's
previous jobs (requested cores, requested walltime, actual runtime, exit code, queue) and
regresses the standardised runtime (seconds) of the next job (MSE, Adam).

Mechanism: the accounting export that feeds the very first shard of training data contains a
few jobs whose ``Elapsed`` field was never filled and was written as the unsigned-32-bit
sentinel 4294967295 s.  The preprocessing standardises with the statistics of the clean
history, so those targets become ~1e6 standard deviations.  The batch that holds them (step
1-3, depending on the seed) produces a gradient ~1e6x the normal one.  Adam's update is
bounded, so nothing becomes non-finite, but the second-moment estimate v absorbs g^2 ~ 1e12x
normal and decays only with beta2 = 0.999: for the rest of the run every later update is
scaled down by ~1e-4 .. 1e-6.  The model is frozen a few steps in and the loss plateaus at
its initial level, while the run on the filtered data learns normally.

ORIGIN: None -- the model is healthy, the corruption is one batch of targets; no module is
where it starts.

Fix: drop the rows whose target is the sentinel / physically impossible (runtime above the
partition's walltime limit) from that batch; same model, lr, steps, other batches.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Slurm sacct exports with unset Elapsed/Timelimit written as UINT32_MAX (4294967295); "
          "job runtime prediction with RNNs (e.g. 'Predicting job run times ... HPC' studies); "
          "Adam second-moment blow-up after a single huge-gradient batch (known 'training "
          "freezes after a bad batch' pattern, cf. Kingma & Ba bias-corrected v)")

SENTINEL = 4294967295.0


class HistoryGRU(nn.Module):
    def __init__(self, n_in, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h[:, -1]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [48, 64, 32][seed % 3]
    layers = [1, 2, 1][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 48, 80][seed % 3]
    bad_step = [1, 2, 3][seed % 3]
    steps = 150
    T, n_in = 8, 5

    torch.manual_seed(seed)
    model = HistoryGRU(n_in, hidden, layers)
    # clean-history statistics of runtime [s] used by the preprocessing
    mu, sd = 3600.0, 2400.0

    batches = []
    for step in range(steps):
        user_scale = torch.randn(bs, 1, generator=g)
        req = torch.randn(bs, T, generator=g) * 0.5 + user_scale
        prev_rt = 0.8 * req + 0.3 * torch.randn(bs, T, generator=g)
        cores = torch.randn(bs, T, generator=g)
        code = (torch.rand(bs, T, generator=g) < 0.1).float()
        queue = torch.randint(0, 2, (bs, T), generator=g).float()
        x = torch.stack([req, prev_rt, cores, code, queue], -1)
        runtime = mu + sd * (0.6 * prev_rt[:, -1] + 0.3 * prev_rt[:, -2] + 0.2 * req[:, -1]
                            - 0.4 * code[:, -1] + 0.05 * torch.randn(bs, generator=g))
        if step == bad_step:
            n_bad = 2 + seed % 2
            runtime[:n_bad] = SENTINEL  # unfilled Elapsed exported as UINT32_MAX seconds
            if fixed:
                keep = runtime < mu + 10 * sd
                x, runtime = x[keep], runtime[keep]
        y = (runtime - mu) / sd
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
