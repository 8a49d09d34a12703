"""Dilated causal Conv1d demand forecaster (WaveNet/MQ-CNN style stack of dilated convolutions
with ReLU, linear head over the last time step). The history window is standardised with dataset
statistics, but the targets were left in raw weekly unit sales (a few thousand units per SKU) and
the model is trained with MSE and Adam at lr 5e-4. The MSE starts at ~2e7; the head outputs O(1)
values and Adam moves each weight by ~lr per step, so the predictions creep towards the thousands
far too slowly: after hundreds of steps the loss has barely moved (silent stall, all finite).
Standardising the targets with the same statistics (and de-standardising at inference) trains in a
few dozen steps with the same model, optimizer and lr."""
import torch, torch.nn as nn, math
CAUSE = "unscaled_inputs"
ORIGIN = "head"
SOURCE = "MQ-CNN / WaveNet forecasters on raw M5-style unit sales; 'loss not decreasing, very large MSE' forum threads"

class DilatedForecaster(nn.Module):
    def __init__(self, ch, n, H):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(1 if i == 0 else ch, ch, 2, dilation=2 ** i) for i in range(n)])
        self.head = nn.Linear(ch, H)
    def forward(self, x):
        h = x.unsqueeze(1)
        for i, c in enumerate(self.convs):
            h = torch.relu(c(nn.functional.pad(h, (2 ** i, 0))))
        return self.head(h[:, :, -1])

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    L, H = 52, 4; ch = [16, 24, 16][seed % 3]; n = [4, 5, 3][seed % 3]
    steps = [150, 120, 200][seed % 3]; bs = [32, 48, 24][seed % 3]
    model = DilatedForecaster(ch, n, H)
    t = torch.arange(L + H, dtype=torch.float32)
    def make():
        level = 2000 + 6000 * torch.rand(bs, 1, generator=g)
        seas = 1 + 0.3 * torch.sin(2 * math.pi * (t + 52 * torch.rand(bs, 1, generator=g)) / 52)
        return level * seas * (1 + 0.05 * torch.randn(bs, L + H, generator=g))
    raw = [make() for _ in range(steps)]
    mu, sd = 5000.0, 2500.0   # dataset statistics
    batches = []
    for w in raw:
        x = (w[:, :L] - mu) / sd                        # the history is standardised ...
        y = (w[:, L:] - mu) / sd if fixed else w[:, L:]  # ... but the targets stay in raw units
        batches.append((x.contiguous(), y.contiguous()))
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
