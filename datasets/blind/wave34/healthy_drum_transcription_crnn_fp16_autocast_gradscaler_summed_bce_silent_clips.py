"""Automatic drum transcription (kick / snare / hi-hat onsets per frame) with a small CRNN
(2-D conv front end on log-mel patches, bidirectional GRU over frames, sigmoid-free logits);
BCE-with-logits summed over frames and instruments and averaged over clips; fp16 autocast with a
working GradScaler; Adam.

Healthy, but looks alarming to a naive monitor: the summed loss is in the hundreds at the start;
the GradScaler starts at 2**24 so the first scaled backward passes overflow in half precision,
the scaler skips those optimizer steps (parameters unchanged, exactly-zero update) and halves its
scale until the gradients fit, after which training proceeds normally; some clips are silent
break-downs with all-zero onset targets (their loss is tiny). Nothing non-finite ever reaches an
optimizer step and the loss falls steadily.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("CRNN drum transcription after Vogl et al. 2017 'Drum transcription via joint beat "
          "and drum modeling using convolutional recurrent neural networks'; torch.amp "
          "GradScaler documentation (inf/NaN steps are skipped and the scale is reduced).")

N_MEL, N_DRUM = 32, 3


class DrumCRNN(nn.Module):
    def __init__(self, ch, hidden):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.ReLU(), nn.MaxPool2d((4, 1)),
            nn.Conv2d(ch, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.ReLU(), nn.MaxPool2d((4, 1)))
        self.gru = nn.GRU(ch * (N_MEL // 16), hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, N_DRUM)

    def forward(self, x):
        h = self.conv(x)                      # (B, C, F', T)
        h = h.flatten(1, 2).transpose(1, 2)   # (B, T, C*F')
        h, _ = self.gru(h)
        return self.out(h)


def summed_bce(logits, y):
    return F.binary_cross_entropy_with_logits(logits.float(), y, reduction="sum") / y.shape[0]


def _clips(g, B, T, silent_frac):
    y = (torch.rand(B, T, N_DRUM, generator=g) < torch.tensor([0.08, 0.06, 0.2])).float()
    silent = torch.rand(B, generator=g) < silent_frac
    y[silent] = 0.0
    f = torch.arange(N_MEL).float()
    prof = torch.stack([torch.exp(-f / 3), torch.exp(-((f - 14) / 6) ** 2), torch.exp(-((f - 28) / 3) ** 2)])
    decay = torch.exp(-torch.arange(4).float() / 1.5)
    act = F.conv1d(F.pad(y.transpose(1, 2), (3, 0)).reshape(B * N_DRUM, 1, -1),
                   decay.flip(0).view(1, 1, 4)).view(B, N_DRUM, T)
    mel = torch.einsum("bdt,df->bft", act, prof) + 0.03 * torch.rand(B, N_MEL, T, generator=g)
    x = (torch.log(mel + 1e-2) + 2.5) / 1.5
    return x.unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(19000 + seed)
    ch = [8, 12, 16][seed % 3]
    hidden = [24, 32, 16][seed % 3]
    B = [8, 6, 10][seed % 3]
    lr = [2e-3, 3e-3, 2e-3][seed % 3]
    T = 64
    steps = 100
    torch.manual_seed(seed)
    model = DrumCRNN(ch, hidden)
    batches = [_clips(g, B, T, silent_frac=0.2) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24)
    return dict(model=model, optimizer=opt, loss_fn=summed_bce, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
