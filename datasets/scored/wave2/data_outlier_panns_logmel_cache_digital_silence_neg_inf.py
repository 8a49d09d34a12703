"""PANNs-style audio-tagging CNN (multi-label, BCE on clip-wise logits, dict output with clip-wise
and frame-wise predictions) trained from a cache of precomputed log-mel features. The cache was
built with log(mel) without a floor; one clip in the corpus is pure digital silence (an all-zero
file from a broken download), so its cached feature map is -inf everywhere. When that batch comes
up, the first convolution turns -inf into inf - inf = NaN and the loss is NaN; the rest of the data
is fine. Fixed: the bad row is floored like every sane log-mel pipeline (clamp at log(1e-10),
i.e. -100 dB), nothing else changes."""
import math
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "conv_block1.0"
SOURCE = "PANNs / AudioSet tagging pipelines: log-mel of all-zero (silent or corrupt) clips gives -inf features and NaN loss unless log(mel + eps) or a dB floor is used"


class PANNsLite(nn.Module):
    def __init__(self, width, n_cls):
        super().__init__()
        self.conv_block1 = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.AvgPool2d(2))
        self.conv_block2 = nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.AvgPool2d((2, 1)))
        self.fc = nn.Linear(width, n_cls)

    def forward(self, logmel):  # (B, 1, mels, T)
        h = self.conv_block2(self.conv_block1(logmel))
        h = h.mean(2)                                    # (B, C, T')
        frame = self.fc(h.transpose(1, 2))               # (B, T', K)
        clip = frame.max(1).values * 0.5 + frame.mean(1) * 0.5
        return {"clipwise": clip, "framewise": frame}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    n_mels, T, n_cls = 16, 24, 5
    width = [16, 12, 20][seed % 3]
    bs = [16, 20, 12][seed % 3]
    steps = [60, 80, 70][seed % 3]
    bad_step = [17, 33, 48][seed % 3]
    events = torch.rand(n_cls, n_mels, 1, generator=g) * 3
    def make(n):
        y = (torch.rand(n, n_cls, generator=g) < 0.3).float()
        mel = 1e-3 * torch.rand(n, n_mels, T, generator=g)
        for i in range(n):
            for k in range(n_cls):
                if y[i, k] > 0:
                    s = int(torch.randint(0, T - 6, (1,), generator=g))
                    mel[i, :, s:s + 6] += events[k] * (0.5 + torch.rand(1, generator=g))
        return torch.log(mel).unsqueeze(1), y
    batches = []
    for step in range(steps):
        x, y = make(bs)
        if step == bad_step:
            x[bs // 2] = torch.log(torch.zeros(1, n_mels, T))  # cached features of an all-zero clip
            y[bs // 2] = 0.0
            if fixed:
                x = x.clamp(min=math.log(1e-10))
        batches.append((x, y))
    model = PANNsLite(width, n_cls)
    opt = torch.optim.AdamW(model.parameters(), lr=[2e-3, 2e-3, 3e-3][seed % 3], weight_decay=1e-2)
    loss_fn = lambda out, y: F.binary_cross_entropy_with_logits(out["clipwise"], y)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
