"""Compact 1-D CNN ECG beat classifier in the style of Kiranyaz et al. (2016): three
Conv1d + ReLU + max-pool stages on a fixed window around the R peak, two dense ReLU
layers, softmax over beat classes (N, S, V, F, Q).  No batch normalisation (the model is
meant for a wearable DSP).  Trained with momentum SGD.

Bug: the learning rate was chosen with an LR range test, but the user took the lr at the
*minimum* of the loss-vs-lr curve (the point where training is already about to diverge)
instead of ~1/10 of it.  After a short plateau the momentum updates become so large that
the narrow second dense layer's weights and biases are pushed negative for every beat
window: its ReLU outputs zero everywhere (20-30 steps in).  From then on no gradient
flows below it, the conv stages above go silent too, the logits are reduced to the
output bias and the loss returns to ~ln(n_classes) and stays there.

ORIGIN: `classifier.4` -- the ReLU of the second (narrowest) dense layer, the first
layer whose units are all dead; the conv ReLUs die after it.

Fix: the usual "minimum / 10" pick from the range test (lr 10x smaller).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "classifier.4"
SOURCE = ("Kiranyaz, Ince, Gabbouj, 'Real-time patient-specific ECG classification by 1-D "
          "convolutional neural networks' (IEEE TBME 2016); Smith's LR range test (2017) "
          "misread as 'pick the lr at the loss minimum'")


class BeatCNN(nn.Module):
    def __init__(self, L, c, k, hidden, n_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(1, c, k, padding=k // 2), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(c, 2 * c, k, padding=k // 2), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(2 * c, 2 * c, k, padding=k // 2), nn.ReLU(), nn.MaxPool1d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(2 * c * (L // 8), hidden), nn.ReLU(),
                                        nn.Linear(hidden, hidden // 2), nn.ReLU(),
                                        nn.Linear(hidden // 2, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def _beats(g, n, L, n_classes=5):
    y = torch.randint(0, n_classes, (n,), generator=g)
    t = torch.linspace(-1, 1, L)
    qrs_w = torch.tensor([0.03, 0.03, 0.09, 0.06, 0.05])[y][:, None]
    p_amp = torch.tensor([0.15, 0.0, 0.0, 0.1, 0.05])[y][:, None]
    t_amp = torch.tensor([0.3, 0.25, -0.35, 0.1, 0.2])[y][:, None]
    pre = torch.tensor([0.0, -0.15, -0.1, 0.0, 0.05])[y][:, None]
    j = 0.02 * torch.randn(n, 1, generator=g)
    qrs = torch.exp(-((t - j) ** 2) / (2 * qrs_w ** 2))
    p = p_amp * torch.exp(-((t + 0.35 + pre) ** 2) / 0.004)
    tw = t_amp * torch.exp(-((t - 0.4) ** 2) / 0.01)
    x = qrs + p + tw + 0.05 * torch.randn(n, L, generator=g) + 0.1 * torch.randn(n, 1, generator=g) * t
    x = (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True)
    return x[:, None], y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(L=128, c=16, k=9, hidden=64, bs=32, lr=0.3, steps=90),
           dict(L=160, c=12, k=7, hidden=48, bs=48, lr=0.4, steps=80),
           dict(L=96, c=16, k=5, hidden=64, bs=24, lr=0.5, steps=100)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(606 + seed)
    model = BeatCNN(cfg["L"], cfg["c"], cfg["k"], cfg["hidden"], 5)
    lr = cfg["lr"] / 10 if fixed else cfg["lr"]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_beats(g, cfg["bs"], cfg["L"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
