"""Storage-ring orbit surrogate: a GRU reads a window of beam-position-monitor (BPM) readbacks and
corrector-magnet setpoints from the archiver and predicts the orbit at the next time sample
(Huber loss, AdamW). Data come from an archiver export; the pipeline standardises each channel
with precomputed statistics but does not drop missing samples.

Mechanism: in one archiver chunk a BPM IOC was disconnected and its PV was exported as NaN for
part of the window (EPICS archivers return NaN / "disconnected" samples). That single batch,
at a step that depends on the seed, carries NaN into the GRU; the loss becomes NaN, AdamW writes
NaN into every weight, and the run never recovers. All other batches are clean.

ORIGIN: "gru", the first module the corrupt batch hits (the fault is in the data, not in a
layer; the GRU is where the NaN first enters the model).
Fix: filter the batch - drop samples whose window or target contains non-finite values
(as a torch.isfinite mask in the data loader).
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "gru"
SOURCE = ("EPICS Archiver Appliance exports NaN/disconnected samples for lost PVs; ML orbit "
          "surrogates/correction at light sources (e.g. Leemann et al. 2019 PRL, ALS); PyTorch "
          "forum: 'loss becomes NaN after one batch' caused by NaN in the input data")


class OrbitGRU(nn.Module):
    def __init__(self, n_in, n_bpm, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, n_bpm)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h[:, -1])


def _windows(g, bs, t_len, n_bpm, n_corr, resp):
    corr = torch.cumsum(0.3 * torch.randn(bs, t_len + 1, n_corr, generator=g), 1) * 0.3
    drift = torch.sin(torch.linspace(0, 6.28, t_len + 1))[None, :, None] * \
        torch.randn(bs, 1, n_bpm, generator=g) * 0.5
    orbit = corr @ resp.T + drift + 0.05 * torch.randn(bs, t_len + 1, n_bpm, generator=g)
    x = torch.cat([orbit[:, :-1], corr[:, 1:]], -1)
    return x, orbit[:, -1]


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    n_bpm, n_corr = 12, 6
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    t_len, steps = 16, 120
    bad_step = [37, 58, 81][seed % 3]
    resp = torch.randn(n_bpm, n_corr, generator=g) / n_corr ** 0.5
    batches = []
    for s in range(steps):
        x, y = _windows(g, bs, t_len, n_bpm, n_corr, resp)
        if s == bad_step:
            bpm = int(torch.randint(0, n_bpm, (1,), generator=g))
            rows = torch.randperm(bs, generator=g)[: bs // 4]
            x[rows, t_len // 2:, bpm] = float("nan")
            y[rows, bpm] = float("nan")
            if fixed:
                keep = torch.isfinite(x).all(2).all(1) & torch.isfinite(y).all(1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    model = OrbitGRU(n_bpm + n_corr, n_bpm, hidden, layers)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.HuberLoss(delta=1.0), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
