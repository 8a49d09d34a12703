"""Conv1d regressor of ChIP-seq read counts per 200 bp region from one-hot DNA (motif
scanner conv -> ReLU -> max/avg pooling -> MLP -> log-rate), trained with
`nn.PoissonNLLLoss(log_input=True, full=True)` and SGD with momentum.

Mechanism (data_outlier): regions are taken from a peak-calling table that was not
intersected with the ENCODE blacklist. A handful of regions that fall in satellite repeats /
rDNA arrays carry artefactual pile-ups of 1e5-1e6 reads, versus the 1-100 reads of real
regions. When the one batch that contains them arrives (its position varies with the seed),
the Poisson gradient exp(log_rate) - y ~ -1e6 for those rows throws the output bias and the
last layers by lr * 1e5; on the next batch exp(log_rate) overflows float32 and the loss
becomes inf/NaN. All other batches are clean and the run is calm until then.

ORIGIN: None - the corruption is in the data; no module misbehaves until the bad rows
arrive, and then every layer on the path gets the huge update at once.

Fix: drop the blacklisted rows (regions with an implausible read count, as the ENCODE
blacklist filter would) from that batch before the step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("ENCODE blacklist (Amemiya, Kundaje & Boyle, Sci. Rep. 2019): artefactual "
          "high-signal regions that must be removed before training on ChIP-seq counts; "
          "BPNet/Basenji-style count models with Poisson loss")


class CountCNN(nn.Module):
    def __init__(self, n_filt, k, hid):
        super().__init__()
        self.scan = nn.Conv1d(4, n_filt, k, padding=k // 2)
        self.conv2 = nn.Conv1d(n_filt, n_filt, 5, padding=2)
        self.fc = nn.Linear(2 * n_filt, hid)
        self.out = nn.Linear(hid, 1)

    def forward(self, x):
        h = F.relu(self.scan(x))
        h = F.relu(self.conv2(h))
        h = torch.cat([h.max(-1).values, h.mean(-1)], 1)
        return self.out(F.relu(self.fc(h))).squeeze(-1)   # log expected count


MOTIF = torch.tensor([0, 2, 0, 3, 1, 0])   # AGATCA-like TF motif


def _batch(g, bs, L):
    idx = torch.randint(0, 4, (bs, L), generator=g)
    n_sites = torch.randint(0, 4, (bs,), generator=g)
    for i in range(bs):
        for _ in range(int(n_sites[i])):
            p = int(torch.randint(0, L - 6, (1,), generator=g))
            idx[i, p:p + 6] = MOTIF
    lam = torch.exp(0.8 + 1.0 * n_sites.float())
    y = torch.poisson(lam, generator=g)
    x = F.one_hot(idx, 4).float().transpose(1, 2).contiguous()
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    n_filt = [32, 48, 24][seed % 3]
    k = [11, 15, 9][seed % 3]
    hid = [32, 64, 48][seed % 3]
    bs = [32, 24, 48][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bad_step = [37, 58, 81][seed % 3]
    steps = 140
    L = 120

    model = CountCNN(n_filt, k, hid)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    crit = nn.PoissonNLLLoss(log_input=True, full=True)

    def loss_fn(out, y):
        return crit(out, y)

    batches = []
    for s in range(steps):
        x, y = _batch(g, bs, L)
        if s == bad_step:
            n_bad = 3 + seed % 3
            rows = torch.randperm(bs, generator=g)[:n_bad]
            y[rows] = torch.exp(torch.empty(n_bad).uniform_(11.5, 14.0, generator=g)).round()
            if fixed:
                keep = y < 1e4           # blacklist filter: implausible pile-ups removed
                x, y = x[keep], y[keep]
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
