"""GRU encoder-decoder trajectory predictor for highway vehicles (NGSIM-style): the
encoder reads 8 past (x, y, vx, vy) states, the decoder unrolls 6 future positions
autoregressively from the last hidden state; plain SGD with momentum.  The user took
lr = 1.0 from a tutorial that trained the same model with gradient clipping, but left the
clipping out.

Mechanism: with the MSE on metre-scale displacements the gradient of the output layer is
O(1..10), so each SGD+momentum step moves the output Linear and the GRU input weights by
far more than their own size (update/weight ratio >> 1e-3); the prediction overshoots,
the loss grows each step and becomes inf/NaN within tens of steps.
ORIGIN: None - the whole optimisation overshoots, no single module is at fault.
Fix: lr = 0.02.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Seq2seq GRU/LSTM trajectory prediction repos on NGSIM/highD: 'loss becomes nan' with SGD lr 1.0 when gradient clipping from the original recipe is omitted"


class Seq2Seq(nn.Module):
    def __init__(self, d, H):
        super().__init__()
        self.emb = nn.Linear(4, d)
        self.encoder = nn.GRU(d, d, batch_first=True)
        self.decoder = nn.GRUCell(2, d)
        self.out = nn.Linear(d, 2)
        self.H = H

    def forward(self, past):
        _, h = self.encoder(torch.relu(self.emb(past)))
        h = h[0]
        y = torch.zeros(past.shape[0], 2)
        outs = []
        for _ in range(self.H):
            h = self.decoder(y, h)
            y = self.out(h)
            outs.append(y)
        return torch.stack(outs, 1)


def _batch(g, B, H):
    v = torch.stack([2.0 + torch.rand(B, generator=g) * 2.0, torch.randn(B, generator=g) * 0.2], -1)
    acc = torch.randn(B, 2, generator=g) * 0.1
    t = torch.arange(-7, 1, dtype=torch.float32)[None, :, None] * 0.5
    pos = t * v[:, None] + 0.5 * t ** 2 * acc[:, None]
    vel = v[:, None] + t * acc[:, None]
    past = torch.cat([pos / 5.0, vel / 2.0], -1)
    tf = torch.arange(1, H + 1, dtype=torch.float32)[None, :, None] * 0.5
    fut = (tf * v[:, None] + 0.5 * tf ** 2 * acc[:, None]) / 5.0
    return past, fut


def build(seed: int, fixed: bool = False) -> dict:
    d, lr, B = [(32, 1.0, 32), (48, 2.0, 24), (32, 1.5, 16)][seed % 3]
    if fixed:
        lr = 0.02
    torch.manual_seed(seed)
    H = 6
    model = Seq2Seq(d, H)
    g = torch.Generator().manual_seed(12000 + seed)
    steps = 80
    batches = [_batch(g, B, H) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
