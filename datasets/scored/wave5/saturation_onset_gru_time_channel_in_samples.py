"""A GRU tagger for a speech/onset task reads standardised log-mel frames and, to know where
it is inside the clip, appends an elapsed-time channel computed in forward() from the frame
index and the hop size. The helper returns the time in *samples* (frame * hop, hop = 160 at
16 kHz, so 0..7840) instead of seconds. Through the GRU input weights this channel puts a
pre-activation of hundreds to thousands on the gates from the first frames on (>90% of the
gate/candidate pre-activations exceed 9 from frame 5): the reset/update sigmoids and the
candidate tanh are pinned at 0/1 and +-1, so the hidden state is a function of time only and
the audio barely reaches the final state. The little gradient that still gets through is
almost all on the time column (multiplied by ~8000); the audio weights get next to nothing.
The clip-level prediction (was the voiced burst in the second half of the clip?) therefore
cannot use the audio and the loss stays at log 2, with no NaN. The fix only returns the time in
seconds (samples / 16000), which keeps the gate and tanh pre-activations small.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "rnn"
SOURCE = ("positional / elapsed-time channels fed unscaled into recurrent sigmoid/tanh gates; "
          "'samples vs seconds' unit slip in audio feature code (GRU outputs constant, zero grads)")

NMEL, NFR, HOP, SR, Hd = 20, 50, 160, 16000, 32


class OnsetGRU(nn.Module):
    def __init__(self, time_in_seconds):
        super().__init__()
        self.rnn = nn.GRU(NMEL + 1, Hd, batch_first=True)
        self.head = nn.Linear(Hd, 2)
        self.time_in_seconds = time_in_seconds

    def elapsed(self, n_frames, dtype):
        t = torch.arange(n_frames, dtype=dtype) * HOP          # samples
        return t / SR if self.time_in_seconds else t

    def forward(self, mel):                                     # (B, NFR, NMEL)
        t = self.elapsed(mel.shape[1], mel.dtype)
        feats = torch.cat([mel, t[None, :, None].expand(mel.shape[0], -1, 1)], dim=-1)
        h, _ = self.rnn(feats)
        return self.head(h[:, -1])


def _batch(g, bs):
    mel = torch.randn(bs, NFR, NMEL, generator=g) * 0.5
    y = torch.randint(0, 2, (bs,), generator=g)
    # a voiced burst (harmonic stripe) somewhere; label 1 iff it lies in the second half
    start = torch.where(y == 1, torch.randint(NFR // 2, NFR - 6, (bs,), generator=g),
                        torch.randint(0, NFR // 2 - 6, (bs,), generator=g))
    band = torch.randint(2, NMEL - 4, (bs,), generator=g)
    for i in range(bs):
        mel[i, start[i]:start[i] + 6, band[i]:band[i] + 3] += 2.0
    return mel, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = OnsetGRU(time_in_seconds=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps, bs = 120, 32
    batches = [_batch(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
