"""Epidemic-phase classifier: 2D CNN over age-group x week incidence heatmaps (SGD+momentum, summed cross-entropy).

Mechanism: each input is a 12 age-groups x 24 weeks heatmap of standardised log incidence for
one region; the label is the epidemic phase of the last week (growth / peak / decline). The CNN
is Conv-ReLU x3, global average pooling and a Linear head. Following a likelihood derivation,
the author writes the loss as the negative log-likelihood of the whole batch,
``CrossEntropyLoss(reduction='sum')``, but keeps the lr tuned for a per-sample mean loss. Every
gradient is therefore batch-size (32-48) times larger; the momentum SGD steps drive the biases
and kernels of the middle conv layers far negative, so their channels output exactly 0 at every
position of every heatmap. Within ~20 steps the second and third ReLU stacks are >95% dead, the
pooled features are constant, no gradient reaches the convs below, and the summed loss
plateaus at ~bs*log(3) with no inf/NaN.

ORIGIN: "features.3", the second conv's ReLU: it is the first stack to go (almost) entirely
dead, which then starves the third conv and cuts the gradient to the first.

Fix: ``reduction='mean'`` (the step size the lr was tuned for), same model, lr, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.3"
SOURCE = ("Karpathy CS231n notes: with too large updates 'as much as 40% of your network can be dead'; "
          "PyTorch forum threads on reduction='sum' losses with a mean-tuned lr and loss stuck at log(C)")


class PhaseCNN(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU(),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(2 * ch, 3)

    def forward(self, x):
        return self.head(self.pool(self.features(x)).flatten(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ch = [16, 24, 32][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [0.02, 0.015, 0.012][seed % 3]
    steps = 150
    A, W = 12, 24
    N = steps * bs
    t = torch.arange(W).float()
    peak = torch.rand(N, 1, generator=g) * 40 - 8        # week of the peak, may lie outside window
    width = 3.0 + 3.0 * torch.rand(N, 1, generator=g)
    curve = torch.exp(-((t - peak) / width) ** 2)        # (N, W)
    age_prof = torch.softmax(torch.randn(N, A, generator=g), 1) * A
    lag = torch.arange(A).float().unsqueeze(0) * 0.2
    heat = age_prof.unsqueeze(-1) * torch.exp(
        -((t - peak.unsqueeze(-1) - lag.unsqueeze(-1)) / width.unsqueeze(-1)) ** 2)
    heat = torch.log(heat + 0.05) + 0.1 * torch.randn(N, A, W, generator=g)
    heat = (heat - heat.mean()) / heat.std()
    slope = curve[:, -1] - curve[:, -3]
    label = torch.where(slope > 0.05, 0, torch.where(slope < -0.05, 2, 1))
    X = heat.unsqueeze(1)

    model = PhaseCNN(ch)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss(reduction="mean" if fixed else "sum")
    batches = [(X[i * bs:(i + 1) * bs], label[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
