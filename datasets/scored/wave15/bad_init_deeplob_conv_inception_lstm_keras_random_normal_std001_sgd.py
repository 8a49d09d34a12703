"""DeepLOB (Zhang, Zohren & Roberts 2019) limit-order-book mid-price direction classifier,
ported from a Keras notebook that initialised every conv, LSTM and dense kernel with
RandomNormal(stddev=0.01).

Mechanism: the conv stack has no normalisation (as in DeepLOB) and ~7 convolutions before the
inception module.  With std 0.01 each conv multiplies the signal scale by ~0.01*sqrt(fan_in)
<< 1, so the features reaching the LSTM are ~1e-8 of the input from step 0; the LSTM/FC see
a constant, the logits are constant and all conv gradients are vanishingly small.  Plain SGD
with momentum cannot climb out: cross-entropy sits at ln(3) for the whole run.

ORIGIN: conv1.0, the first conv layer, where the geometric shrink of the activation scale
starts (every later layer compounds it).
Fix: PyTorch's default (kaiming-uniform) init for conv/linear layers.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "conv1.0"
SOURCE = "DeepLOB (Zhang et al. 2019) Keras ports using RandomNormal(stddev=0.01) kernels; vanishing signal in un-normalised deep conv stacks"


class DeepLOB(nn.Module):
    def __init__(self, c=16, hidden=32):
        super().__init__()
        act = lambda: nn.LeakyReLU(0.01)
        self.conv1 = nn.Sequential(
            nn.Conv2d(1, c, (1, 2), stride=(1, 2)), act(),
            nn.Conv2d(c, c, (4, 1), padding=(2, 0)), act(),
            nn.Conv2d(c, c, (4, 1), padding=(1, 0)), act())
        self.conv2 = nn.Sequential(
            nn.Conv2d(c, c, (1, 2), stride=(1, 2)), act(),
            nn.Conv2d(c, c, (4, 1), padding=(2, 0)), act(),
            nn.Conv2d(c, c, (4, 1), padding=(1, 0)), act())
        self.conv3 = nn.Sequential(
            nn.Conv2d(c, c, (1, 10)), act(),
            nn.Conv2d(c, c, (4, 1), padding=(2, 0)), act(),
            nn.Conv2d(c, c, (4, 1), padding=(1, 0)), act())
        self.inc1 = nn.Sequential(nn.Conv2d(c, 2 * c, 1), act(), nn.Conv2d(2 * c, 2 * c, (3, 1), padding=(1, 0)), act())
        self.inc2 = nn.Sequential(nn.Conv2d(c, 2 * c, 1), act(), nn.Conv2d(2 * c, 2 * c, (5, 1), padding=(2, 0)), act())
        self.inc3 = nn.Sequential(nn.MaxPool2d((3, 1), stride=1, padding=(1, 0)), nn.Conv2d(c, 2 * c, 1), act())
        self.lstm = nn.LSTM(6 * c, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 3)

    def forward(self, x):
        x = self.conv3(self.conv2(self.conv1(x)))
        x = torch.cat([self.inc1(x), self.inc2(x), self.inc3(x)], 1)  # (B, 6c, T, 1)
        x = x.squeeze(-1).transpose(1, 2)
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def _keras_random_normal(model, std=0.01):
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.normal_(m.weight, 0.0, std)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LSTM):
            for name, p in m.named_parameters():
                if "weight" in name:
                    nn.init.normal_(p, 0.0, std)
                else:
                    nn.init.zeros_(p)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(T=16, c=8, bs=32, lr=2e-3), dict(T=20, c=12, bs=24, lr=1e-3), dict(T=24, c=8, bs=48, lr=2e-3)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(100 + seed)
    model = DeepLOB(cfg["c"])
    if not fixed:
        _keras_random_normal(model)
    steps = 100
    batches = []
    for _ in range(steps):
        x = torch.randn(cfg["bs"], 1, cfg["T"], 40, generator=g)
        # persistent order-flow imbalance at the touch: bid size (col 1) up, ask size (col 3) down
        imb = torch.randn(cfg["bs"], generator=g)
        x[:, 0, :, 1] += imb[:, None]
        x[:, 0, :, 3] -= imb[:, None]
        y = torch.full((cfg["bs"],), 1, dtype=torch.long)
        y[imb > 0.43] = 2
        y[imb < -0.43] = 0
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
