"""Seq2point non-intrusive load monitoring (Zhang et al. 2018): a window of aggregate mains power
goes through two 1D conv ReLU layers, is flattened into a fully connected ReLU layer, and a linear
output predicts the appliance's power at the window midpoint.  Adam was given lr=0.1, the SGD
learning rate of the baseline config.  The first updates overshoot (one loss spike of hundreds to
thousands), and in the process the second conv layer's few channels are pushed to all-negative
pre-activations: within ~10 steps every conv2 ReLU outputs 0 for every window, its gradient is exactly
0, nothing downstream receives signal and the prediction collapses to a constant.  The MSE then
plateaus at the appliance-power variance with no NaN.  Fixed: lr=1e-3 (the published Adam setting)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "conv2"
SOURCE = "Seq2point NILM (Zhang et al., AAAI 2018) reimplementations: 'model outputs a constant' after a too-large Adam lr (dead ReLU channels)"


class Seq2Point(nn.Module):
    def __init__(self, win, ch, hidden):
        super().__init__()
        self.conv1 = nn.Conv1d(1, ch, 9, padding=4)
        self.conv2 = nn.Conv1d(ch, ch, 7, padding=3)
        self.dense = nn.Linear(ch * win, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = F.relu(self.conv2(F.relu(self.conv1(x.unsqueeze(1)))))
        return self.out(F.relu(self.dense(h.flatten(1)))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    win, ch, hidden, bs, steps = [(49, 8, 64, 32, 150), (39, 6, 96, 48, 120), (59, 8, 48, 32, 180)][seed % 3]
    model = Seq2Point(win, ch, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 0.1)
    batches = []
    for _ in range(steps):
        on = (torch.rand(bs, generator=g) < 0.4).float()                # appliance (kettle) on at midpoint
        start = torch.randint(0, win // 2, (bs,), generator=g)
        length = torch.randint(win // 2, win, (bs,), generator=g)
        t = torch.arange(win)[None]
        act = ((t >= start[:, None]) & (t < (start + length)[:, None])).float() * on[:, None]
        base = 0.3 * torch.randn(bs, 1, generator=g) + 0.2 * torch.randn(bs, win, generator=g)
        mains = base + 2.0 * act
        batches.append((mains, 2.0 * act[:, win // 2] - 0.8))         # z-scored appliance power
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.mse_loss(o, y), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
