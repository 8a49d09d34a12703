"""MalConv raw-byte malware detector, SGD+Nesterov with lr ~1.0 instead of 0.03.

Mechanism: MalConv (Raff et al. 2017): byte embedding (8-d) -> two parallel strided Conv1d
(one gated through a sigmoid) -> global max-pool over the whole file -> FC+ReLU -> logit,
trained with SGD, momentum 0.9 and Nesterov (paper: lr=0.01; lr=0.03 works for this
smaller copy). The user's config had `lr: 1.0` (0.8-1.2 across configs), the value of the
linear byte-n-gram baseline it was copied from, ~30x too high. Each step
now moves the conv filters and the byte embedding by far more than their own size;
because the global max-pool routes the gradient through a single window per file, the
updates keep switching which window wins, the logits swing by hundreds between steps
and the BCE loss climbs to tens..1e11 (or overflows to inf/NaN within ~10 steps) instead
of decreasing from ln 2 (update/weight ratios ~1e-1 .. 1e0 from the first step).

ORIGIN: None: all layers receive oversized updates; no single module starts it.

Fix: lr=0.03, momentum 0.9, Nesterov (the paper's recipe scaled to this model), everything
else identical.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Raff et al. 2017 'Malware detection by eating a whole EXE' (MalConv: gated "
          "strided conv over raw bytes, global max-pool, SGD lr=0.01 momentum 0.9 "
          "Nesterov); lr copied from a linear baseline, ~30x too high -> loss diverges")


class MalConv(nn.Module):
    def __init__(self, emb, filters, window, hidden):
        super().__init__()
        self.embed = nn.Embedding(257, emb, padding_idx=0)
        self.conv = nn.Conv1d(emb, filters, window, stride=window)
        self.gate = nn.Conv1d(emb, filters, window, stride=window)
        self.fc = nn.Sequential(nn.Linear(filters, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        e = self.embed(x).transpose(1, 2)
        h = self.conv(e) * torch.sigmoid(self.gate(e))
        return self.fc(h.amax(dim=2)).squeeze(1)


def _files(g, n, length, sigs):
    y = (torch.rand(n, generator=g) < 0.5).float()
    # code-like byte distribution (Zipfian over opcodes), bytes shifted by +1 (0 = padding)
    probs = 1.0 / torch.arange(1, 257).float() ** 1.1
    x = torch.multinomial(probs, n * length, replacement=True, generator=g).view(n, length) + 1
    x[:, :64] = 0x4D + 1  # 'MZ' header region, identical for all PE files
    for i in range(n):
        if y[i] > 0:
            # packed section (high entropy) + an unpacking stub signature at a random offset
            start = int(torch.randint(256, length - 1024, (1,), generator=g))
            x[i, start:start + 768] = torch.randint(1, 257, (768,), generator=g)
            sig = sigs[int(torch.randint(0, len(sigs), (1,), generator=g))]
            off = int(torch.randint(64, length - len(sig), (1,), generator=g))
            x[i, off:off + len(sig)] = sig
    # truncate/pad: some files are shorter than the input length
    keep = torch.randint(length // 2, length + 1, (n,), generator=g)
    x[torch.arange(length).unsqueeze(0) >= keep.unsqueeze(1)] = 0
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(13000 + seed)
    cfg = [
        dict(length=4096, emb=8, filters=64, window=64, hidden=64, bs=16, steps=80, lr=1.0),
        dict(length=6144, emb=8, filters=48, window=96, hidden=48, bs=12, steps=70, lr=1.2),
        dict(length=3072, emb=8, filters=96, window=48, hidden=96, bs=24, steps=90, lr=0.8),
    ][seed % 3]
    sigs = [torch.randint(1, 257, (24,), generator=g) for _ in range(4)]
    model = MalConv(cfg["emb"], cfg["filters"], cfg["window"], cfg["hidden"])
    batches = [_files(g, cfg["bs"], cfg["length"], sigs) for _ in range(cfg["steps"])]
    lr = 0.03 if fixed else cfg["lr"]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.BCEWithLogitsLoss(),
                batches=batches, steps=cfg["steps"])
