"""A FastSpeech-style duration predictor (phoneme embedding -> 2 x [Conv1d, ReLU, LayerNorm]
-> Linear) is trained with a masked MSE to predict how long each phoneme lasts. The forced
aligner exports durations in audio *samples* at 22.05 kHz (roughly 1,000-7,000 per phoneme)
and they are used as regression targets as they are, neither converted to log-frames nor
standardised. The network's output starts around 0, so the loss starts around 1e7 and the
gradients are dominated by the target scale; Adam moves the output layer by ~1e-3 per step
and after the whole run the predictions are still about a hundred times too small,
so the loss barely moves (no NaN). The fix only standardises the targets (z-score with the
corpus mean/std of the durations), which is what the loss and the output layer expect.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "proj"
SOURCE = ("FastSpeech / FastSpeech 2 duration predictor (Ren et al. 2019/2020) trained on raw "
          "aligner durations instead of log / normalised durations")

NPH, L, D, SR = 40, 24, 64, 22050
DUR_MEAN, DUR_STD = 3000.0, 1150.0


class DurationPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(NPH + 1, D, padding_idx=0)
        self.conv1 = nn.Conv1d(D, D, 3, padding=1)
        self.ln1 = nn.LayerNorm(D)
        self.conv2 = nn.Conv1d(D, D, 3, padding=1)
        self.ln2 = nn.LayerNorm(D)
        self.proj = nn.Linear(D, 1)

    def forward(self, ph, mask):
        h = self.embed(ph)
        h = self.ln1(torch.relu(self.conv1(h.transpose(1, 2))).transpose(1, 2))
        h = self.ln2(torch.relu(self.conv2(h.transpose(1, 2))).transpose(1, 2))
        return self.proj(h).squeeze(-1) * mask


def _batch(g, bs, base):
    lengths = torch.randint(L // 2, L + 1, (bs,), generator=g)
    mask = (torch.arange(L)[None] < lengths[:, None]).float()
    ph = torch.randint(1, NPH + 1, (bs, L), generator=g) * mask.long()
    # duration (seconds): phoneme-specific base, shortened before a vowel-like successor,
    # phrase-final lengthening, plus speaker-rate noise
    nxt = torch.cat([ph[:, 1:], torch.zeros(bs, 1, dtype=torch.long)], 1)
    sec = base[ph] * (1.0 - 0.25 * (nxt % 5 == 0).float())
    last = (torch.arange(L)[None] == (lengths[:, None] - 1)).float()
    sec = sec * (1 + 0.6 * last) * (0.9 + 0.2 * torch.rand(bs, 1, generator=g))
    samples = (sec * SR).round() * mask
    return (ph, mask), (samples, mask)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DurationPredictor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    base = 0.06 + 0.14 * torch.rand(NPH + 1, generator=g)       # seconds per phoneme type
    steps, bs = 150, 32
    batches = []
    for _ in range(steps):
        x, (dur, mask) = _batch(g, bs, base)
        if fixed:
            dur = (dur - DUR_MEAN) / DUR_STD * mask               # standardised targets
        batches.append((x, (dur, mask)))

    def loss_fn(pred, target):
        dur, mask = target
        return (((pred - dur) ** 2) * mask).sum() / mask.sum()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
