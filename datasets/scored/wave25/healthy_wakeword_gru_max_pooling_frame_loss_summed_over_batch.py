"""Healthy: streaming wake-word detection with a small GRU over log-mel frames that outputs a
per-frame wake-word logit, trained with the max-pooling loss used for on-device keyword
spotting: for a clip containing the wake word only the frame with the highest logit is pushed
up (BCE-with-logits to 1); for a negative clip every frame is pushed down. The per-clip losses
are *summed* over the batch (reduction='sum'), and trained with RMSprop.

Why it looks suspicious but is fine: the loss is a sum over ~hundreds of frames and tens of
clips, so its value is in the tens to hundreds and it changes with the batch's mix of
positives and negatives; the positive clips send gradient through one frame each (very sparse
per-frame gradients, exactly-zero for all other frames of those clips). The lr is chosen for
the summed loss, nothing is non-finite, and the detector learns.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("max-pooling loss for small-footprint keyword spotting (Sun et al. 2016, Amazon "
          "'Max-pooling loss training of LSTM for small-footprint KWS'); summed BCE losses")


class WakeGRU(nn.Module):
    def __init__(self, n_mel, hidden):
        super().__init__()
        self.gru = nn.GRU(n_mel, hidden, batch_first=True)
        self.frame_logit = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.frame_logit(h).squeeze(-1)  # (B, T) per-frame logits


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hidden = [48, 32, 64][seed % 3]
    lr = [5e-4, 8e-4, 4e-4][seed % 3]
    bs = [16, 24, 12][seed % 3]
    steps = 150
    T, n_mel = [50, 40, 60][seed % 3], 20
    model = WakeGRU(n_mel, hidden)
    kw = torch.randn(12, n_mel, generator=g) * 1.5  # wake-word spectro-temporal pattern
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, T, n_mel, generator=g)  # standardised log-mel background
        pos = torch.rand(bs, generator=g) < 0.4
        for i in torch.nonzero(pos).flatten().tolist():
            st = int(torch.randint(0, T - 12, (1,), generator=g))
            x[i, st:st + 12] += kw
        # distractor words in negatives: random patterns of the same length
        for i in torch.nonzero(~pos).flatten().tolist():
            if float(torch.rand(1, generator=g)) < 0.5:
                st = int(torch.randint(0, T - 12, (1,), generator=g))
                x[i, st:st + 12] += torch.randn(12, n_mel, generator=g) * 1.5
        batches.append((x, pos.float()))

    def loss_fn(logits, is_pos):
        idx = logits.argmax(1)
        max_logit = logits.gather(1, idx[:, None]).squeeze(1)
        pos_loss = F.binary_cross_entropy_with_logits(max_logit, torch.ones_like(max_logit), reduction="none")
        neg_loss = F.binary_cross_entropy_with_logits(logits, torch.zeros_like(logits), reduction="none").sum(1)
        return torch.where(is_pos > 0.5, pos_loss, neg_loss).sum()

    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
