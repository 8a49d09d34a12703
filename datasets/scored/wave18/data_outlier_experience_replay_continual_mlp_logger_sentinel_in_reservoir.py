"""Domain-incremental continual learning with experience replay (reservoir buffer):
an MLP fault classifier is trained on a stream of sensor-feature tasks, and every
step's batch is the current stream batch concatenated with a replay batch drawn
from a reservoir buffer of earlier samples.

Mechanism: early in the stream, one logger file encoded a missing reading with
the sentinel value -9999 in a single feature of a single row.  The row goes
into the current batch and -- because the reservoir is not yet full -- into the
replay buffer, so it is replayed again and again.  Each time it appears, the
-9999 feature drives the logits to ~1e3-1e4, the cross-entropy gradient on the
first layer is thousands of times larger than normal, and the SGD step throws
the weights far away: the loss spikes to 1e1-1e3 and then either overflows to
NaN or settles with most ReLUs knocked out at ~log(n_classes), never recovering.
The rest of the stream is clean, standardised data.

ORIGIN: None -- the failure is caused by a corrupt sample in the data stream,
not by any module.

Fix: drop non-finite / sentinel rows (|x| > 50) from the stream before they are
trained on or inserted into the replay buffer; the stream, buffer policy, model
and optimiser are otherwise identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Experience replay / reservoir sampling baseline for continual learning "
          "(Chaudhry et al. 2019 'On Tiny Episodic Memories'); -9999 missing-value "
          "logger sentinel (common in sensor CSVs) that is never filtered and keeps "
          "being replayed from the buffer")


def _task_data(g, task, n, d, n_cls, means):
    # domain-incremental: same classes, each task rotates + shifts the sensor space
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=g))
    shift = 0.5 * torch.randn(d, generator=g)
    y = torch.randint(0, n_cls, (n,), generator=g)
    x = means[y] + 0.8 * torch.randn(n, d, generator=g)
    x = x @ q + shift
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(d=16, hidden=64, n_cls=4, tasks=3, per_task=50, bcur=16, brep=16, cap=200,
             lr=0.05, bad_step=6, bad_feat=3),
        dict(d=24, hidden=128, n_cls=5, tasks=4, per_task=40, bcur=12, brep=20, cap=150,
             lr=0.03, bad_step=8, bad_feat=5),
        dict(d=12, hidden=48, n_cls=3, tasks=3, per_task=60, bcur=24, brep=8, cap=300,
             lr=0.08, bad_step=3, bad_feat=0),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    d, n_cls = cfg["d"], cfg["n_cls"]
    means = 1.5 * torch.randn(n_cls, d, generator=g)

    # the stream: tasks one after another, cfg["per_task"] current batches each
    stream = []
    for t in range(cfg["tasks"]):
        x, y = _task_data(g, t, cfg["per_task"] * cfg["bcur"], d, n_cls, means)
        for i in range(cfg["per_task"]):
            sl = slice(i * cfg["bcur"], (i + 1) * cfg["bcur"])
            stream.append([x[sl].clone(), y[sl].clone()])
    # the corrupt logger row
    stream[cfg["bad_step"]][0][2, cfg["bad_feat"]] = -9999.0

    buf_x, buf_y, seen = [], [], 0
    batches = []
    for xb, yb in stream:
        if fixed:
            keep = xb.abs().max(dim=1).values < 50.0     # filter sentinel rows
            xb, yb = xb[keep], yb[keep]
        if buf_x:
            bx = torch.stack(buf_x)
            by = torch.stack(buf_y)
            idx = torch.randint(0, len(buf_x), (cfg["brep"],), generator=g)
            batches.append((torch.cat([xb, bx[idx]]), torch.cat([yb, by[idx]])))
        else:
            batches.append((xb, yb))
        # reservoir insertion after the step
        for xi, yi in zip(xb, yb):
            seen += 1
            if len(buf_x) < cfg["cap"]:
                buf_x.append(xi)
                buf_y.append(yi)
            else:
                j = int(torch.randint(0, seen, (1,), generator=g))
                if j < cfg["cap"]:
                    buf_x[j], buf_y[j] = xi, yi

    model = nn.Sequential(
        nn.Linear(d, cfg["hidden"]), nn.ReLU(),
        nn.Linear(cfg["hidden"], cfg["hidden"]), nn.ReLU(),
        nn.Linear(cfg["hidden"], n_cls),
    )
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=len(batches))
