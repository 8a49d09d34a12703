"""Healthy run: CRNN text-line recogniser (Shi et al. 2015: conv + BatchNorm stack that collapses the
image height, the width axis becomes the time axis, a bidirectional LSTM, per-column log-softmax
over blank + 10 glyphs) trained with CTC loss using reduction='sum' divided by the batch size, as
several OCR code bases do. The inputs are (images, widths) tuples of text lines of varying length
and the targets a dict of concatenated labels and lengths. Things that look alarming but are
normal: the loss starts in the tens (it is a sum over every character of every line, not a mean),
it jumps up and down from batch to batch because the number of characters per batch varies by 2x,
and after a fast initial drop the model sits for 100+ steps on the classic CTC "blank plateau" (it
emits only blanks, the loss is flat and looks like a stall) before the glyph identities are picked
up and the loss falls by one to two orders of magnitude. fixed=True returns the same run.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ('Shi, Bai & Yao 2015 CRNN; Graves et al. 2006 CTC; CTC loss summed over variable-length '
          'labels and divided by batch size as in several OCR code bases')

NG, H, GW = 10, 12, 6


class CRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d((2, 1)),
                                 nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d((2, 1)),
                                 nn.Conv2d(32, 32, (3, 3), padding=(0, 1)), nn.BatchNorm2d(32), nn.ReLU())
        self.rnn = nn.LSTM(32, 32, bidirectional=True, batch_first=True)
        self.out = nn.Linear(64, NG + 1)

    def forward(self, img, widths):
        f = self.cnn(img)                              # (B, 32, 1, W)
        f = f.squeeze(2).transpose(1, 2)               # (B, W, 32)
        h, _ = self.rnn(f)
        return self.out(h).log_softmax(-1).transpose(0, 1), widths


def ctc_sum_loss():
    ctc = nn.CTCLoss(blank=0, reduction="sum", zero_infinity=False)

    def loss_fn(out, tgt):
        logp, widths = out
        return ctc(logp, tgt["labels"], widths, tgt["lengths"]) / logp.shape[1]
    return loss_fn


def _make_batch(g, glyphs, n):
    lens = torch.randint(2, 7, (n,), generator=g)
    wmax = int(lens.max()) * GW + 4
    imgs = torch.zeros(n, 1, H, wmax)
    widths = torch.zeros(n, dtype=torch.long)
    labels = []
    for i in range(n):
        x = 2
        for _ in range(int(lens[i])):
            c = int(torch.randint(1, NG + 1, (1,), generator=g))
            imgs[i, 0, :, x:x + GW - 1] = glyphs[c]
            labels.append(c)
            x += GW
        widths[i] = x + 2
    imgs += 0.15 * torch.randn(imgs.shape, generator=g)
    return (imgs, widths), {"labels": torch.tensor(labels), "lengths": lens}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    glyphs = (torch.rand(NG + 1, H, GW - 1, generator=g) > 0.5).float()
    batches = [_make_batch(g, glyphs, 12) for _ in range(12)]
    model = CRNN()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps = 280
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=ctc_sum_loss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
