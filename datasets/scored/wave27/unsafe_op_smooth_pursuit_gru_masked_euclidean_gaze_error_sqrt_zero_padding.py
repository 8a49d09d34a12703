"""Smooth-pursuit eye-movement model: a GRU receives the target's position and velocity (deg,
deg/s scaled) on each 10 ms frame of a pursuit trial and predicts the eye position (deg); trials
have different lengths (target blanked / trial aborted), so they are zero-padded to the batch
maximum with a 0/1 mask. The loss is the mean Euclidean gaze error over valid frames, trained with
AdamW.

Mechanism: the loss is written as ||mask * pred - target||_2 per frame, i.e.
sqrt(((pred * m - tgt) ** 2).sum(-1)), and averaged over valid frames. On padded frames both the
masked prediction and the zero-padded target are exactly 0, so the argument of sqrt is exactly 0.
The forward value is fine (0, and masked anyway), but d sqrt(u)/du = 1/(2 sqrt(u)) = inf there,
and inf * 0 (from the mask / the zero difference) = NaN: the backward pass puts NaN into the
readout and GRU gradients the first time a batch contains a shorter trial. Batches of full-length
trials train calmly; the first padded batch (its position depends on the seed) makes every weight
NaN and the loss is NaN from the next step on.

ORIGIN: "readout", the Linear producing the gaze prediction: the NaN enters the model through its
output gradient (the sqrt is in the loss, not in a module), and its weight gradient is the first
to turn NaN.

Fix: clamp the squared distance with clamp_min(1e-12) before the sqrt (an epsilon, so the
derivative is finite; masked frames still contribute 0); model, data, optimiser and steps
unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "readout"
SOURCE = ("PyTorch issue/forum reports 'NaN gradient of torch.norm / torch.sqrt at exactly zero' "
          "(sqrt backward is inf at 0); masked Euclidean displacement losses in trajectory/gaze prediction "
          "producing NaN on padded steps; smooth-pursuit modelling (Lisberger 2010)")


class PursuitGRU(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(4, hidden, num_layers=layers, batch_first=True)
        self.readout = nn.Linear(hidden, 2)

    def forward(self, stim, mask):
        h, _ = self.gru(stim)
        return self.readout(h) * mask[..., None], mask


def _loss(eps):
    def loss_fn(out, tgt):
        pred, mask = out
        sq = ((pred - tgt) ** 2).sum(-1)
        if eps:
            sq = sq.clamp_min(1e-12)
        dist = torch.sqrt(sq)
        return (dist * mask).sum() / mask.sum()
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [32, 48, 64][seed % 3]
    layers = [1, 2, 1][seed % 3]
    batch = [16, 24, 32][(seed + 1) % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    steps = 120
    T = 60
    first_padded = [17, 34, 52][seed % 3]

    torch.manual_seed(seed)
    model = PursuitGRU(hidden, layers)
    batches = []
    for s in range(steps):
        # step-ramp (Rashbass) target: step back then ramp at 5-20 deg/s in a random direction
        ang = torch.rand(batch, generator=g) * 6.283
        spd = 5 + 15 * torch.rand(batch, generator=g)
        t = torch.arange(T) * 0.01
        r = spd[:, None] * (t[None] - 0.1)
        tx, ty = r * torch.cos(ang)[:, None], r * torch.sin(ang)[:, None]
        vx = (spd * torch.cos(ang))[:, None].expand(-1, T)
        vy = (spd * torch.sin(ang))[:, None].expand(-1, T)
        stim = torch.stack([tx / 10, ty / 10, vx / 10, vy / 10], -1)
        # eye: latency 100 ms, then first-order approach to target velocity, plus catch-up
        gain = 1 - torch.exp(-torch.clamp(t - 0.1, min=0) / 0.08)
        ex = torch.cumsum(gain[None] * vx * 0.01, 1) - 0.1 * spd[:, None] * torch.cos(ang)[:, None] * (t[None] > 0.25)
        ey = torch.cumsum(gain[None] * vy * 0.01, 1) - 0.1 * spd[:, None] * torch.sin(ang)[:, None] * (t[None] > 0.25)
        eye = torch.stack([ex, ey], -1) + 0.05 * torch.randn(batch, T, 2, generator=g)
        mask = torch.ones(batch, T)
        if s >= first_padded and torch.rand(1, generator=g).item() < 0.5 or s == first_padded:
            n_short = int(torch.randint(1, 4, (1,), generator=g))
            for k in range(n_short):
                L = int(torch.randint(30, T - 5, (1,), generator=g))
                mask[k, L:] = 0.0
        stim = stim * mask[..., None]
        eye = eye * mask[..., None]  # zero-padded targets
        batches.append(((stim, mask), eye))

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return {"model": model, "optimizer": opt, "loss_fn": _loss(fixed), "batches": batches,
            "steps": steps}
