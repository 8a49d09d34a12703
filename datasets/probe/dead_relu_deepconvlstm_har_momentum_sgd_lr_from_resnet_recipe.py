"""DeepConvLSTM (Ordonez & Roggen 2016) activity recogniser: ReLU Conv1d stack over 6 IMU
channels, then an LSTM, classifying from the last time step.  The optimiser line was copied
from an image-classification ResNet recipe: SGD(momentum=0.9, lr=0.8-1.2) -- a lr meant for a
BatchNorm network with a big batch.

Mechanism: there is no normalisation in the conv stack, so the first momentum-amplified steps
move the conv weights/biases far; the second conv's pre-activations go negative for every
window and time step, its ReLU (`features.3`) outputs 0, the LSTM sees a constant input and the
classifier collapses to the class prior.  The loss rises in the first steps and then stays flat.
ORIGIN: `features.3`, the ReLU after the last convolution, which dies.
Fix: lr=0.1 (the HAR recipe's value), same momentum.
"""
import math, torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.3"
SOURCE = "DeepConvLSTM HAR reimplementations (Opportunity/UCI-HAR); reports of 'HAR CNN-LSTM always predicts one activity' after reusing an ImageNet SGD schedule"


class DeepConvLSTM(nn.Module):
    def __init__(self, C, F, H, K):
        super().__init__()
        self.features = nn.Sequential(nn.Conv1d(C, F, 5, padding=2), nn.ReLU(),
                                      nn.Conv1d(F, F, 5, padding=2), nn.ReLU())
        self.lstm = nn.LSTM(F, H, batch_first=True)
        self.out = nn.Linear(H, K)

    def forward(self, x):
        h = self.features(x.transpose(1, 2)).transpose(1, 2)
        o, _ = self.lstm(h)
        return self.out(o[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(F=32, H=32, bs=32, T=48, lr=1.0, steps=120),
           dict(F=48, H=24, bs=24, T=64, lr=0.8, steps=100),
           dict(F=24, H=48, bs=48, T=40, lr=1.2, steps=140)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    K, C = 5, 6
    freqs = torch.tensor([0.5, 1.0, 2.0, 3.0, 4.5])
    amps = torch.rand(K, C, generator=g) + 0.3
    batches = []
    t = torch.arange(cfg["T"]).float() / 16.0
    for _ in range(cfg["steps"]):
        y = torch.randint(0, K, (cfg["bs"],), generator=g)
        ph = torch.rand(cfg["bs"], 1, C, generator=g) * 2 * math.pi
        x = amps[y].unsqueeze(1) * torch.sin(2 * math.pi * freqs[y].view(-1, 1, 1) * t.view(1, -1, 1) + ph)
        x = x + 0.3 * torch.randn(x.shape, generator=g)
        batches.append((x, y))
    model = DeepConvLSTM(C, cfg["F"], cfg["H"], K)
    opt = torch.optim.SGD(model.parameters(), lr=0.1 if fixed else cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
