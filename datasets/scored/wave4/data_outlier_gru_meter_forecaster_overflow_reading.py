"""GRU smart-meter load forecaster (standardised 48-step history -> next 8 steps) trained with Adam.
One batch mid-run contains a corrupt meter reading: the head-end system wrote its 'register overflow'
sentinel 3.4e38 into a single row, and the standardisation used the training set statistics, so the
row stays ~1e38. The squared error of that row overflows float32 to inf, the loss is inf at that step
and the backward pass fills the GRU weights with NaN. The fix filters the corrupt row (clips it to
the plausible range) before batching; nothing else changes."""
import torch, torch.nn as nn, math
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "AMI smart-meter data with overflow/sentinel readings; 'loss becomes inf after some iterations LSTM' threads"

class Forecaster(nn.Module):
    def __init__(self, h, H):
        super().__init__(); self.gru = nn.GRU(1, h, batch_first=True); self.head = nn.Linear(h, H)
    def forward(self, x):
        o, _ = self.gru(x.unsqueeze(-1)); return self.head(o[:, -1])

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    L, H = 48, 8; hid = [32, 24, 40][seed % 3]; bs = [32, 24, 40][seed % 3]
    steps = [60, 80, 70][seed % 3]; bad_step = [23, 41, 55][seed % 3]
    model = Forecaster(hid, H)
    t = torch.arange(6000, dtype=torch.float32)
    s = torch.sin(2 * math.pi * t / 48) + 0.4 * torch.sin(2 * math.pi * t / 336) + 0.2 * torch.randn(6000, generator=g)
    batches = []
    for i in range(steps):
        idx = torch.randint(0, 6000 - L - H, (bs,), generator=g).tolist()
        w = torch.stack([s[j:j + L + H] for j in idx]).clone()
        if i == bad_step:
            r = int(torch.randint(0, bs, (1,), generator=g)); w[r, L + 2] = 3.4e38
            if fixed: w = w.clamp(-10, 10)
        batches.append((w[:, :L].contiguous(), w[:, L:].contiguous()))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
