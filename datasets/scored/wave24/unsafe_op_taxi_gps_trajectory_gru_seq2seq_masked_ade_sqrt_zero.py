"""Short-horizon vehicle trajectory forecaster on taxi GPS traces (Porto / T-Drive style):
a GRU encoder reads the last 10 map-matched GPS fixes (standardised local x/y displacements
and speed), a GRU-cell decoder rolls out the next H positions as cumulative offsets, and the
loss is the masked average displacement error (ADE, metres in standardised units) that
trajectory-prediction code bases write by hand; AdamW.

Mechanism: the ADE is written ``sqrt(((pred*mask - gt*mask)**2).sum(-1))``: padded future
steps are zeroed in both prediction and ground truth before the Euclidean norm. For most
batches every track has the full horizon (mask all ones) and training is calm, but when a
batch holds trips that end (passenger drop-off / the trace stops) before the horizon, the
padded steps have exactly zero displacement error; d sqrt(s)/ds = 1/(2 sqrt(0)) = inf, times
ds/d(diff) = 0, gives NaN gradients. The loss of that step is still finite, but AdamW writes
NaN into every decoder and encoder weight, and from the next step on the loss is NaN.

ORIGIN = "decoder_out": the output projection is the first module whose gradient is NaN
(the unsafe sqrt sits in the hand-written loss right after it, which is not a module).

Fix: add an epsilon inside the root, ``sqrt(s + 1e-9)`` (the masked steps then have a zero
gradient). Same model, data, optimiser and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "decoder_out"
SOURCE = ("hand-written ADE/FDE losses (Social-LSTM / Trajectron-style repos) using "
          "torch.sqrt(((pred-gt)**2).sum(-1)) with zero-padded horizons; PyTorch issue/forum "
          "threads 'NaN gradient of sqrt at 0' / 'norm of zero vector gives nan grad'")


class TrajSeq2Seq(nn.Module):
    def __init__(self, hidden, H):
        super().__init__()
        self.H = H
        self.encoder = nn.GRU(3, hidden, batch_first=True)
        self.decoder = nn.GRUCell(2, hidden)
        self.decoder_out = nn.Linear(hidden, 2)

    def forward(self, past):
        _, h = self.encoder(past)
        h = h[0]
        step = past[:, -1, :2]
        pos, out = torch.zeros_like(step), []
        for _ in range(self.H):
            h = self.decoder(step, h)
            step = self.decoder_out(h)
            pos = pos + step
            out.append(pos)
        return torch.stack(out, 1)


def masked_ade(pred, target, eps=0.0):
    gt, mask = target[..., :2], target[..., 2:]
    sq = ((pred * mask - gt * mask) ** 2).sum(-1)
    dist = torch.sqrt(sq + eps) if eps > 0 else torch.sqrt(sq)
    return (dist * mask[..., 0]).sum() / mask[..., 0].sum()


def _trips(g, n, P, H):
    T = P + H
    speed = 0.6 + 0.6 * torch.rand(n, 1, generator=g)
    heading = 6.2832 * torch.rand(n, 1, generator=g)
    turn = 0.15 * torch.randn(n, 1, generator=g) * (torch.rand(n, 1, generator=g) < 0.4).float()
    t = torch.arange(T).float()
    hd = heading + turn * torch.relu(t - P + 3 * torch.rand(n, 1, generator=g))
    v = speed * (1 + 0.1 * torch.randn(n, T, generator=g).cumsum(1) / math.sqrt(T)).clamp(min=0.2)
    dx, dy = v * torch.cos(hd), v * torch.sin(hd)
    past = torch.stack([dx[:, :P], dy[:, :P], v[:, :P]], 2)
    fut = torch.stack([dx[:, P:], dy[:, P:]], 2).cumsum(1)
    return past, fut


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(12000 + seed)
    hidden = [48, 64, 32][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    H = [8, 6, 10][seed % 3]
    first_short = [34, 57, 81][seed % 3]
    P, steps = 10, 110
    torch.manual_seed(seed)
    model = TrajSeq2Seq(hidden, H)
    past, fut = _trips(g, steps * bs, P, H)
    batches = []
    for i in range(steps):
        p, f = past[i * bs:(i + 1) * bs], fut[i * bs:(i + 1) * bs].clone()
        mask = torch.ones(bs, H, 1)
        if i >= first_short and (i == first_short or torch.rand(1, generator=g).item() < 0.3):
            k = int(torch.randint(1, 4, (1,), generator=g))
            rows = torch.randperm(bs, generator=g)[:k]
            for r in rows.tolist():                   # trip ended: pad the rest with zeros
                end = int(torch.randint(1, H, (1,), generator=g))
                mask[r, end:] = 0.0
                f[r, end:] = 0.0
        batches.append((p, torch.cat([f, mask], -1)))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    eps = 1e-9 if fixed else 0.0
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: masked_ade(out, y, eps),
                batches=batches, steps=steps)
