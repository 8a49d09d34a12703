"""Learned legged-robot state estimator: a temporal convolutional network (dilated causal
Conv1d stack) over a history of proprioceptive readings - 12 joint encoder positions, 12
joint velocities and the 4 foot-contact sensor readings - regressing the base linear
velocity.  The user fed the raw log: joint positions in encoder COUNTS (0..16383 of a
14-bit absolute encoder), joint velocities in counts/s, force sensors in raw ADC counts,
and the velocity target in mm/s.

Mechanism: inputs of ~1e3..1e4 into the first conv give pre-activations of ~1e3, the
MSE against mm/s targets is ~1e5..1e6 at step 0, and the SGD step on the first conv
weights (gradient proportional to the raw input) is enormous: the loss blows up to
inf/NaN within a few steps.
ORIGIN: tcn.0 - the first conv, which receives the unscaled inputs.
Fix: standardise every input channel with dataset statistics and express the target in
m/s (same model, same optimizer).
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "tcn.0"
SOURCE = "Learned state estimators for legged robots (e.g. Ji et al. 2022 concurrent training of a state estimator): raw encoder-count inputs giving nan loss before normalisation"


class CausalTCN(nn.Module):
    def __init__(self, c, levels):
        super().__init__()
        convs = []  # causal padding is applied in forward, so tcn.0 is the first conv
        cin = 28
        for i in range(levels):
            convs += [nn.Conv1d(cin, c, 3, dilation=2 ** i), nn.ReLU()]
            cin = c
        self.tcn = nn.Sequential(*convs)
        self.head = nn.Linear(c, 3)

    def forward(self, x):
        h = x
        for m in self.tcn:
            if isinstance(m, nn.Conv1d):
                h = nn.functional.pad(h, (2 * m.dilation[0], 0))
            h = m(h)
        return self.head(h[:, :, -1])


def _batch(g, B, T, raw):
    vel = torch.randn(B, 3, generator=g) * 0.5                                    # m/s
    phase = torch.rand(B, 12, 1, generator=g) * 6.28
    t = torch.arange(T, dtype=torch.float32)[None, None] * 0.1
    freq = 1.0 + vel[:, :1, None].abs() * 2.0
    q = 0.3 * torch.sin(freq * t + phase) + 0.1 * vel[:, 1:2, None]               # rad
    dq = 0.3 * freq * torch.cos(freq * t + phase)                                  # rad/s
    contact = (torch.sin(freq * t + phase[:, :4]) > 0).float() * (200 + 50 * vel[:, 2:3, None])  # N
    if raw:
        cpr = 16384 / (2 * math.pi)
        x = torch.cat([q * cpr + 8192, dq * cpr, contact * 20.0], 1)              # counts, counts/s, ADC
        y = vel * 1000.0                                                           # mm/s
    else:
        x = torch.cat([q / 0.3, dq / 1.0, (contact - 100.0) / 100.0], 1)           # standardised
        y = vel
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    c, levels, lr, B, T = [(32, 3, 0.05, 16, 24), (32, 3, 0.03, 32, 20), (32, 3, 0.05, 24, 16)][seed % 3]
    torch.manual_seed(seed)
    model = CausalTCN(c, levels)
    g = torch.Generator().manual_seed(16000 + seed)
    steps = 120
    batches = [_batch(g, B, T, raw=not fixed) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
