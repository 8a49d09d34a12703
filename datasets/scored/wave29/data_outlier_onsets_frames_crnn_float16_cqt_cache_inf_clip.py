"""Piano-transcription CRNN (Onsets-and-Frames style frame head) hit by an inf-valued CQT clip.

Mechanism: log-CQT features are pre-computed once and cached to disk as float16 to halve the
cache.  One very loud clip (clipped master, peak magnitude above 65504) overflows to +inf in the
float16 cache, and log(inf) stays inf after the loader casts back to float32.  Training is calm
(BCE-with-logits over 48 pitch activations, Adam) until the batch holding that clip arrives:
the conv front-end turns inf into inf/NaN, the loss is NaN, and Adam writes NaN into every
parameter so all later losses are NaN as well.  The failing step depends on the seed.

ORIGIN: ``conv.0`` -- the first convolution is the first module the corrupt batch reaches; the
model itself is sound, so the named module is only where the bad values first enter.

Fix: the data loader drops clips whose features are not finite (a ``torch.isfinite`` filter
before batching); everything else -- model, optimiser, the other clips, step count -- is the same.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "conv.0"
SOURCE = ("float16 feature caches overflowing to inf for loud clips (65504 limit) feeding NaN into "
          "training, a pattern reported for cached spectrogram datasets; Hawthorne et al. 2018, "
          "'Onsets and Frames' frame-activation head with BCE")

N_PITCH, N_BINS = 48, 72


class CRNN(nn.Module):
    def __init__(self, ch, hid):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
        )
        self.proj = nn.Linear(ch * N_BINS, hid)
        self.norm = nn.LayerNorm(hid)
        self.rnn = nn.GRU(hid, hid // 2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(hid, N_PITCH)

    def forward(self, x):                       # x: (B, T, F)
        h = self.conv(x.unsqueeze(1))           # (B, C, T, F)
        B, C, T, Fq = h.shape
        h = self.norm(self.proj(h.permute(0, 2, 1, 3).reshape(B, T, C * Fq)))
        h = h + self.rnn(h)[0]
        return self.head(h)                     # (B, T, 48) logits


def _clip(g, T):
    roll = torch.zeros(T, N_PITCH)
    for _ in range(int(torch.randint(6, 14, (1,), generator=g))):
        p = int(torch.randint(0, N_PITCH, (1,), generator=g))
        s = int(torch.randint(0, T - 4, (1,), generator=g))
        d = int(torch.randint(3, 12, (1,), generator=g))
        roll[s:s + d, p] = 1.0
    spec = torch.zeros(T, N_BINS)
    for h, a in ((0, 1.0), (12, 0.5), (19, 0.3)):        # fundamental + harmonics in CQT bins
        spec[:, h:h + N_PITCH] += a * roll[:, :N_BINS - h][:, :N_PITCH]
    mag = 1e-3 + spec * (0.5 + torch.rand(1, generator=g)) * 30.0
    return mag, roll


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(3000 + seed)
    ch = [8, 12, 16][seed % 3]
    hid = [64, 48, 96][seed % 3]
    bs = [8, 10, 6][seed % 3]
    lr = [2e-3, 1e-3, 1.5e-3][seed % 3]
    steps, T = 150, 32
    bad_step = [47, 88, 121][seed % 3]

    batches = []
    for step in range(steps):
        xs, ys = [], []
        for i in range(bs):
            mag, roll = _clip(g, T)
            mag = (mag * (1 + 0.1 * torch.rand(T, N_BINS, generator=g))).half()  # fp16 cache
            if step == bad_step and i < 2:
                mag = (mag.float() * 4000.0).half()      # clipped loud master: > 65504 -> inf
            xs.append(((torch.log(mag.float()) + 4.0) / 3.0))
            ys.append(roll)
        x, y = torch.stack(xs), torch.stack(ys)
        if fixed:
            ok = torch.isfinite(x).flatten(1).all(1)
            x, y = x[ok], y[ok]
        batches.append((x, y))

    torch.manual_seed(seed)
    model = CRNN(ch, hid)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
