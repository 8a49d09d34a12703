"""A tutorial nn.RNN (tanh) forecaster predicts the next value of noisy sine waves. The synthetic
logger occasionally writes a glitch: one window in one mid-run batch has its target replaced by a
huge sentinel-like reading (1e4). The plain MSE on that batch produces a gradient ~1e8 times the
usual one; SGD takes one giant step, the recurrent and input weights jump to huge values, the
tanh hidden state is pinned at +-1 afterwards, and the loss never recovers (a stall, which on
some seeds later turns into NaN as momentum keeps pushing the blown-up weights).
Fixed: the glitched row is filtered out of that batch (replaced by a clean window)."""
import torch, torch.nn as nn
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Known pattern: a single corrupt sensor reading in time-series training data blowing up an SGD-trained RNN (PyTorch forums 'loss suddenly jumps and never recovers')"

class Forecaster(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.rnn = nn.RNN(1, h, batch_first=True); self.head = nn.Linear(h, 1)
    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1]).squeeze(-1)

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    h = [16, 24, 32][seed % 3]; T = [20, 16, 24][seed % 3]
    model = Forecaster(h)
    steps = [150, 200, 180][seed % 3]; bs = [32, 16, 24][seed % 3]
    bad_step = [30, 45, 60][seed % 3]
    batches = []
    for s in range(steps):
        f = 0.2 + 0.3 * torch.rand(bs, 1, generator=g); ph = 6.28 * torch.rand(bs, 1, generator=g)
        t = torch.arange(T + 1.)
        w = torch.sin(f * t + ph) + 0.05 * torch.randn(bs, T + 1, generator=g)
        x, y = w[:, :T].unsqueeze(-1), w[:, T].clone()
        if s == bad_step and not fixed:
            y[3] = 1e4
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=[0.05, 0.08, 0.06][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
