"""Expressive performance rendering (VirtuosoNet-style score-to-performance model:
per-note score features -> temporal conv stack over the note sequence -> performed
MIDI velocity, onset deviation and articulation), with features and targets fed in
raw MIDI units: pitch number (21-108), duration and beat position in ticks
(480 PPQ, up to ~2000), notated dynamic as MIDI velocity (30-110), tempo in BPM;
targets velocity (1-127), onset deviation in milliseconds and articulation in %.

Mechanism: input columns span 1e0-1e3 and the targets 1e1-1e2, so the first
forward pass produces outputs of the wrong scale and an MSE of ~1e3-1e4 from step 0;
the gradients are dominated by the tick-valued columns, SGD with a normal lr
overshoots along them immediately and the loss overflows within a few steps.

ORIGIN: ``net.0`` - the first conv, which receives the unscaled feature columns.

Fix: standardise every input column and the three targets with dataset statistics
(z-scores), as the VirtuosoNet preprocessing does; model, optimizer and lr unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("VirtuosoNet / expressive performance rendering preprocessing (feature "
          "z-scoring); forum/GitHub reports of MIDI regression models 'loss in the "
          "thousands then nan' when feeding raw ticks and velocities")

N_FEAT = 6     # pitch, duration_ticks, beat_pos_ticks, dyn_velocity, tempo_bpm, is_downbeat
N_OUT = 3      # velocity, onset deviation (ms), articulation (%)


class Renderer(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = [nn.Conv1d(N_FEAT, width, 5, padding=2), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Conv1d(width, width, 5, padding=2), nn.ReLU()]
        layers.append(nn.Conv1d(width, N_OUT, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):                 # x: (B, notes, feat)
        return self.net(x.transpose(1, 2)).transpose(1, 2)


def _pieces(g, n, L):
    pitch = 60 + torch.cumsum(torch.randint(-3, 4, (n, L), generator=g), 1).clamp(-30, 40).float()
    dur = torch.tensor([120., 240., 480., 960., 1920.])[torch.randint(0, 5, (n, L), generator=g)]
    onset = torch.cumsum(dur, 1) - dur
    beat_pos = onset % 1920
    dyn = torch.tensor([33., 49., 64., 80., 96., 112.])[torch.randint(0, 6, (n, 1), generator=g)].expand(n, L)
    tempo = (60 + 100 * torch.rand(n, 1, generator=g)).expand(n, L)
    down = (beat_pos == 0).float()
    x = torch.stack([pitch, dur, beat_pos, dyn, tempo, down], -1)
    # performance: louder on downbeats and high notes, agogic lengthening of long notes
    vel = (dyn + 10 * down + 0.3 * (pitch - 60) + 4 * torch.randn(n, L, generator=g)).clamp(1, 127)
    dev = 15 * down - 0.01 * dur + 5 * torch.randn(n, L, generator=g)            # ms
    art = 85 - 0.005 * dur + 20 * (dur <= 240).float() * -1 + 3 * torch.randn(n, L, generator=g)
    y = torch.stack([vel, dev, art], -1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(16000 + seed)
    width = [32, 48, 24][seed % 3]
    depth = [3, 2, 4][seed % 3]
    bs = [8, 12, 6][seed % 3]
    lr = [1e-2, 8e-3, 1.2e-2][seed % 3]
    L = 48
    steps = 150
    model = Renderer(width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    # dataset statistics from a held-out sample of pieces (used only by the fix)
    xs, ys = _pieces(torch.Generator().manual_seed(99), 256, L)
    xm, xsd = xs.mean((0, 1)), xs.std((0, 1)).clamp_min(1e-3)
    ym, ysd = ys.mean((0, 1)), ys.std((0, 1))
    batches = []
    for _ in range(steps):
        x, y = _pieces(g, bs, L)
        if fixed:
            x, y = (x - xm) / xsd, (y - ym) / ysd
        batches.append((x, y))

    def loss_fn(pred, target):
        return F.mse_loss(pred, target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps}
