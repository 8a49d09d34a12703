"""Dialogue-act classifier: an LSTM over each turn's tokens, masked mean pooling over the
non-padding positions, then a linear layer.  The pooling divides by mask.sum(1).  Turns that
were transcribed as empty (a nod, silence, a non-verbal turn labelled 'non-verbal') are legitimate
data and appear now and then: every position is padding.

Mechanism: for an empty turn both numerator and denominator of the masked mean are 0; 0/0 is NaN,
the logits and loss become NaN at the first batch with an empty turn, and the NaN gradient
poisons all weights.
ORIGIN: `pool`, the masked-mean module that produces the first NaN.
Fix: divide by mask.sum(1).clamp_min(1) (an empty turn pools to the zero vector).
"""
import torch, torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "pool"
SOURCE = "Switchboard/SwDA dialogue-act classifiers with masked mean pooling; 'NaN loss when a sequence is all padding' threads"


class MaskedMean(nn.Module):
    def __init__(self, safe):
        super().__init__()
        self.safe = safe

    def forward(self, h, mask):
        m = mask.unsqueeze(-1).float()
        d = m.sum(1)
        if self.safe:
            d = d.clamp_min(1.0)
        return (h * m).sum(1) / d


class DA(nn.Module):
    def __init__(self, V, E, H, C, safe):
        super().__init__()
        self.embed = nn.Embedding(V, E, padding_idx=0)
        self.lstm = nn.LSTM(E, H, batch_first=True)
        self.pool = MaskedMean(safe)
        self.out = nn.Linear(H, C)

    def forward(self, x):
        h, _ = self.lstm(self.embed(x))
        return self.out(self.pool(h, x != 0))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(E=32, H=32, bs=32, L=16, lr=1e-2, first=35, steps=90),
           dict(E=24, H=48, bs=24, L=20, lr=8e-3, first=60, steps=110),
           dict(E=48, H=24, bs=40, L=12, lr=1.2e-2, first=20, steps=80)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(41 + seed)
    V, C = 200, 5
    cue = torch.randint(1, C, (V,), generator=g)
    batches = []
    for k in range(cfg["steps"]):
        lens = torch.randint(3, cfg["L"] + 1, (cfg["bs"],), generator=g)
        x = torch.randint(1, V, (cfg["bs"], cfg["L"]), generator=g)
        x = x * (torch.arange(cfg["L"]) < lens.unsqueeze(1))
        y = torch.randint(1, C, (cfg["bs"],), generator=g)
        x[:, :3] = y.unsqueeze(1) * 20 + torch.randint(0, 20, (cfg["bs"], 3), generator=g)
        if k >= cfg["first"] and k % 7 == cfg["first"] % 7:
            x[-1] = 0          # an empty (non-verbal) turn
            y[-1] = 0
        batches.append((x, y))
    model = DA(V, cfg["E"], cfg["H"], C, safe=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
