"""CRNN (Shi, Bai & Yao, TPAMI 2017) for handwritten digit-string recognition: a VGG-style
conv stack with BatchNorm that collapses the image height to 1, a 2-layer bidirectional LSTM
over the width, and a per-column classifier trained with CTC (blank = 0).

Mechanism: the CRNN reference trains with Adadelta at lr = 1.0 (Adadelta's lr is only a
multiplier on an already self-scaled step, so 1.0 is its normal value). The port switches to
``torch.optim.Adam`` ("converges faster") and keeps ``lr=1.0``. Adam moves every weight by
~lr per step whatever its gradient, so each step changes the 0.1-scale conv/LSTM/classifier
weights by ~1.0: the per-frame logits explode to hundreds, the LSTM gates saturate, and the
CTC loss jumps from ~11 to ~100-300 within a few steps and stays several times
above its starting value for the rest of the run (the correctly-tuned run falls
to the ~2.8 'all-blank' CTC plateau in the same time).

ORIGIN: None -- a global optimiser setting; no single layer starts it.

Fix: an Adam learning rate (7e-4 .. 1.5e-3 across the seeds); same optimiser, model and data.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ('CRNN (Shi, Bai & Yao, TPAMI 2017) trained with ADADELTA (torch.optim.Adadelta '
          'default lr=1.0); known pattern of switching the optimiser to Adam and keeping '
          'lr=1.0, CTC loss explodes')


GLYPHS = {
    0: ["111", "101", "101", "101", "111"], 1: ["010", "110", "010", "010", "111"],
    2: ["111", "001", "111", "100", "111"], 3: ["111", "001", "011", "001", "111"],
    4: ["101", "101", "111", "001", "001"], 5: ["111", "100", "111", "001", "111"],
    6: ["111", "100", "111", "101", "111"], 7: ["111", "001", "010", "010", "010"],
    8: ["111", "101", "111", "101", "111"], 9: ["111", "101", "111", "001", "111"],
}
GLYPH_T = {k: torch.tensor([[float(c) for c in row] for row in v]) for k, v in GLYPHS.items()}


def render_line(g, digits, height, width):
    img = torch.zeros(height, width)
    col = 2
    for d in digits:
        glyph = GLYPH_T[d]
        sc = 2 + int(torch.randint(0, 2, (1,), generator=g))          # handwriting size jitter
        big = glyph.repeat_interleave(sc, 0).repeat_interleave(sc, 1)
        h, w = big.shape
        r = int(torch.randint(0, max(1, height - h), (1,), generator=g))
        if col + w >= width:
            break
        img[r:r + h, col:col + w] = torch.maximum(img[r:r + h, col:col + w], big)
        col += w + int(torch.randint(1, 4, (1,), generator=g))
    img = img + 0.15 * torch.randn(height, width, generator=g)
    return img


def make_batch(g, bs, height, width, max_len):
    imgs, targets, lengths = [], [], []
    for _ in range(bs):
        n = int(torch.randint(2, max_len + 1, (1,), generator=g))
        digits = torch.randint(0, 10, (n,), generator=g).tolist()
        imgs.append(render_line(g, digits, height, width))
        targets += [d + 1 for d in digits]                             # 0 is the CTC blank
        lengths.append(n)
    return torch.stack(imgs)[:, None], (torch.tensor(targets), torch.tensor(lengths))


class CRNN(nn.Module):
    def __init__(self, w, hidden, n_classes):
        super().__init__()
        def cbr(ci, co):
            return [nn.Conv2d(ci, co, 3, 1, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True)]
        self.cnn = nn.Sequential(
            *cbr(1, w), nn.MaxPool2d(2, 2),                            # H/2, W/2
            *cbr(w, 2 * w), nn.MaxPool2d(2, 2),                        # H/4, W/4
            *cbr(2 * w, 4 * w), *cbr(4 * w, 4 * w), nn.MaxPool2d((2, 1), (2, 1)),   # H/8
            *cbr(4 * w, 4 * w), nn.AdaptiveMaxPool2d((1, None)))       # collapse height
        self.rnn = nn.LSTM(4 * w, hidden, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(2, 0, 1)                    # (T, B, C)
        y, _ = self.rnn(f)
        return self.fc(y).log_softmax(-1)                              # (T, B, classes)


def ctc(out, target):
    labels, lengths = target
    T, B = out.shape[:2]
    return F.ctc_loss(out, labels, torch.full((B,), T, dtype=torch.long), lengths,
                      blank=0, reduction="mean")


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(w=16, hidden=32, lr=1e-3, bs=16, width=64, max_len=4, steps=80),
        dict(w=12, hidden=48, lr=7e-4, bs=12, width=80, max_len=5, steps=100),
        dict(w=16, hidden=24, lr=1.5e-3, bs=20, width=56, max_len=3, steps=70),
    ][seed % 3]
    torch.manual_seed(seed)
    model = CRNN(cfg["w"], cfg["hidden"], 11)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"] if fixed else 1.0)   # Adadelta's lr
    g = torch.Generator().manual_seed(700 + seed)
    batches = [make_batch(g, cfg["bs"], 16, cfg["width"], cfg["max_len"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=ctc, batches=batches, steps=cfg["steps"])
