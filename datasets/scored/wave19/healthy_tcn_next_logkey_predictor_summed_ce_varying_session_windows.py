"""Healthy: dilated-TCN next-log-key predictor, one session per step, loss SUMMED over windows.

What looks alarming: every step is one parsed session (an HDFS block's lifecycle) of very
different length, cut into sliding windows of h log keys; the loss is the cross-entropy
summed (not averaged) over all windows of the session, as in several DeepLog ports that
accumulate per-window losses. The loss therefore jumps by 5-10x from one step to the next
(a 30-window session next to a 160-window one), and the largest sessions late in training
still produce losses above the smallest early ones. The model is the DeepLog next-key
formulation with the LSTM replaced by a causal dilated temporal convolutional network
(residual blocks, dilations 1, 2, 4), as in TCN-based log anomaly detectors.

Why it is healthy: the per-window cross-entropy falls steadily from ln(K) to the entropy
of the workflow automaton; the jumps are only the varying number of summed terms. The
gradient scale follows the window count, which Adam normalises away.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Du et al. 2017 'DeepLog' next-log-key formulation (window h, top-k anomaly "
          "rule) with a TCN sequence model (Bai et al. 2018 dilated causal convolutions) "
          "on HDFS-like block sessions; loss summed over windows per session")


class CausalBlock(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv1 = nn.Conv1d(ch, ch, 3, dilation=dilation)
        self.conv2 = nn.Conv1d(ch, ch, 3, dilation=dilation)

    def forward(self, x):
        h = torch.relu(self.conv1(F.pad(x, (self.pad, 0))))
        h = self.conv2(F.pad(h, (self.pad, 0)))
        return torch.relu(x + h)


class LogKeyTCN(nn.Module):
    def __init__(self, n_keys, ch, n_blocks):
        super().__init__()
        self.embed = nn.Embedding(n_keys, ch)
        self.tcn = nn.Sequential(*[CausalBlock(ch, 2 ** i) for i in range(n_blocks)])
        self.fc = nn.Linear(ch, n_keys)

    def forward(self, windows):
        h = self.tcn(self.embed(windows).transpose(1, 2))
        return self.fc(h[:, :, -1])


def summed_ce(logits, target):
    return F.cross_entropy(logits, target, reduction="sum")


def _automaton(g, n_keys):
    # sparse workflow: each key has a main successor and a few rare alternatives
    succ = torch.zeros(n_keys, n_keys)
    for k in range(n_keys):
        nxt = torch.randperm(n_keys, generator=g)[:3]
        succ[k, nxt[0]] = 0.92
        succ[k, nxt[1]] = 0.06
        succ[k, nxt[2]] = 0.02
    return succ


def _session(g, succ, length):
    k = int(torch.randint(0, 3, (1,), generator=g))  # sessions start with an allocate-type key
    seq = [k]
    for _ in range(length - 1):
        k = int(torch.multinomial(succ[k], 1, generator=g))
        seq.append(k)
    return torch.tensor(seq)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(9000 + seed)
    cfg = [
        dict(n_keys=28, ch=48, blocks=3, h=10, lr=3e-3, steps=120, lo=40, hi=150),
        dict(n_keys=40, ch=32, blocks=2, h=8, lr=5e-3, steps=100, lo=35, hi=170),
        dict(n_keys=20, ch=24, blocks=3, h=6, lr=4e-3, steps=140, lo=30, hi=110),
    ][seed % 3]
    succ = _automaton(g, cfg["n_keys"])
    model = LogKeyTCN(cfg["n_keys"], cfg["ch"], cfg["blocks"])
    batches = []
    for _ in range(cfg["steps"]):
        length = int(torch.randint(cfg["lo"], cfg["hi"], (1,), generator=g))
        s = _session(g, succ, length)
        windows = s.unfold(0, cfg["h"], 1)[:-1]
        targets = s[cfg["h"]:]
        batches.append((windows.contiguous(), targets))
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=optimizer, loss_fn=summed_ce, batches=batches,
                steps=cfg["steps"])
