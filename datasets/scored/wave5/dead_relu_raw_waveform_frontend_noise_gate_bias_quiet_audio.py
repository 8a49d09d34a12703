"""A raw-waveform keyword/sound classifier starts with a learnable strided filterbank
(Conv1d on the waveform) followed by ReLU. The author initialises the filterbank bias to
-0.25 as a "noise gate", reasoning that the ReLU should only let through filter outputs above
the background-noise floor. That threshold was picked on full-scale recordings, but this corpus
is quiet (peak amplitude ~0.05, i.e. about -26 dBFS), so every filter response is far below
0.25: at initialisation every frontend ReLU is negative for every frame of every clip. The
frontend, and everything before the pooling, receives exactly zero gradient, the later layers
see an all-zero input, only the output bias can learn, and the loss sits at log(4) without
any NaN. The fix only initialises the frontend bias to 0.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "frontend"
SOURCE = ("learnable front-ends on raw audio (SampleCNN / SincNet style) with a thresholding "
          "bias; dead-ReLU reports for quiet, un-normalised waveforms")

SR, DUR, NCLS = 4000, 4000, 4


class RawAudioNet(nn.Module):
    def __init__(self, gate_bias):
        super().__init__()
        self.frontend = nn.Conv1d(1, 16, 64, stride=16)
        nn.init.constant_(self.frontend.bias, gate_bias)
        self.act = nn.ReLU()
        self.body = nn.Sequential(nn.Conv1d(16, 32, 5, stride=2), nn.ReLU(),
                                  nn.Conv1d(32, 32, 5, stride=2), nn.ReLU())
        self.head = nn.Linear(32, NCLS)

    def forward(self, wav):                                  # (B, 1, DUR)
        h = self.body(self.act(self.frontend(wav)))
        return self.head(h.mean(-1))


def _clips(g, bs):
    t = torch.arange(DUR).float() / SR
    y = torch.randint(0, NCLS, (bs,), generator=g)
    f0 = 200 + 600 * torch.rand(bs, 1, generator=g)
    out = torch.zeros(bs, DUR)
    for i in range(bs):
        c = int(y[i])
        if c == 0:                        # rising chirp
            ph = 2 * math.pi * (f0[i] * t + 150 * t ** 2)
            out[i] = torch.sin(ph)
        elif c == 1:                      # falling chirp
            ph = 2 * math.pi * ((f0[i] + 300) * t - 150 * t ** 2)
            out[i] = torch.sin(ph)
        elif c == 2:                      # two-tone
            out[i] = 0.5 * torch.sin(2 * math.pi * f0[i] * t) + 0.5 * torch.sin(2 * math.pi * 1.5 * f0[i] * t)
        else:                             # noise burst
            out[i] = torch.randn(DUR, generator=g) * (t > 0.3).float() * (t < 0.7).float()
    gain = 0.03 + 0.02 * torch.rand(bs, 1, generator=g)       # quiet corpus: ~-26 dBFS peaks
    out = gain * out + 0.002 * torch.randn(bs, DUR, generator=g)
    return out[:, None, :], y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RawAudioNet(gate_bias=0.0 if fixed else -0.25)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps, bs = 150, 16
    batches = [_clips(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
