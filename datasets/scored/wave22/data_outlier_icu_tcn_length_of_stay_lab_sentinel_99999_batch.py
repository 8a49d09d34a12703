"""ICU length-of-stay TCN hit by one batch whose lab column carries the sentinel 99999.

Mechanism: a dilated temporal convolutional network reads 48 hours of z-scored vitals and labs
and regresses the (standardised) remaining length of stay with MSE, trained with SGD +
momentum. The data are clean except for one extraction batch (one hospital site) where missing
lactate values were exported as 99999 instead of NaN; z-scoring with the cohort statistics
turns them into values of ~5e4. That single batch produces a loss of ~1e9 and a gradient
~1e5x larger than usual; one SGD step throws the conv weights far out of range, the ReLU
stacks go dead/constant and the model never recovers (the loss plateaus at the target
variance or becomes non-finite).

ORIGIN: ``tcn.0`` -- the first temporal convolution, which receives the corrupted lab channel.

Fix: filter the batch -- treat the sentinel as missing (set to the cohort mean, i.e. 0 after
z-scoring) before training; model, optimiser and all other data unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "tcn.0"
SOURCE = ("MIMIC/eICU-style extraction pipelines where missing labs are exported as 99999 / 9999 "
          "sentinels; TCN/RNN length-of-stay baselines whose loss explodes once such a batch is "
          "reached (forum 'loss suddenly huge then constant' threads).")


class TCN(nn.Module):
    def __init__(self, n_feat, c, n_levels):
        super().__init__()
        layers, cin = [], n_feat
        for i in range(n_levels):
            d = 2 ** i
            layers += [nn.Conv1d(cin, c, 3, padding=d, dilation=d), nn.ReLU()]
            cin = c
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, 1))

    def forward(self, x):
        h = self.tcn(x.transpose(1, 2))
        return self.head(h[:, :, -1]).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [32, 24, 32][seed % 3]
    n_levels = [4, 5, 4][seed % 3]
    lr = [0.01, 0.02, 0.015][seed % 3]
    bsz = [32, 48, 40][seed % 3]
    bad_step = [60, 85, 45][seed % 3]
    hours, n_feat = 48, 10
    lactate = 6
    steps = 200
    w = torch.randn(n_feat, generator=g)

    def make_batch():
        severity = torch.randn(bsz, 1, generator=g)
        x = torch.randn(bsz, hours, n_feat, generator=g) * 0.6
        trend = torch.linspace(0, 1, hours)[None, :, None]
        x = x + severity[:, :, None] * trend * w[None, None, :] * 0.8
        los = severity.squeeze(1) + 0.3 * torch.randn(bsz, generator=g)
        return x, los

    batches = [make_batch() for _ in range(steps)]
    # one site's export: missing lactate written as 99999, z-scored with cohort mean 2.0, std 1.8 mmol/L
    x_bad, y_bad = batches[bad_step]
    miss = torch.rand(bsz, hours, generator=g) < 0.3
    x_bad = x_bad.clone()
    x_bad[:, :, lactate] = torch.where(miss, torch.full_like(x_bad[:, :, lactate], (99999 - 2.0) / 1.8),
                                       x_bad[:, :, lactate])
    if fixed:
        x_bad[:, :, lactate] = torch.where(miss, torch.zeros_like(x_bad[:, :, lactate]), x_bad[:, :, lactate])
    batches[bad_step] = (x_bad, y_bad)

    model = TCN(n_feat, c, n_levels)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
