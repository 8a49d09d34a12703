"""Quantization-aware training of a sensor-fault classifier poisoned by one sentinel batch.

Mechanism: eager-mode QAT MLP with FakeQuantize modules (MovingAverageMinMaxObserver,
averaging constant 0.01, the default QAT activation observer) on the input and after each
ReLU.  The data logger writes 999999 for a disconnected channel; one batch with a few such
rows slips through the standardisation.  The observers' running max jumps to ~1e4 and only
decays by 1% per step, so for the rest of the run the quantisation step of ``quant_in`` is
~40 while the real (standardised) inputs are O(1): every genuine input is rounded to the
zero point, the fake-quant STE mask blocks their gradient, and the classifier can only
learn the class prior.  Loss returns to log(C) and stays there.

ORIGIN is ``quant_in``: its observer is the first module to absorb the corrupt values and
its collapsed scale is what erases the inputs (the hidden fake-quants inherit the damage).

Fix: filter the corrupt rows (|x| > 1e3) out of the batch before it reaches the model.
"""
import torch
import torch.nn as nn
from torch.ao.quantization import FakeQuantize, MovingAverageMinMaxObserver

CAUSE = "data_outlier"
ORIGIN = "quant_in"
SOURCE = ("PyTorch eager-mode QAT recipe (prepare_qat, moving-average min/max observers); "
          "known issue of activation ranges blown up by outliers/sentinel values during "
          "QAT/calibration (e.g. LLM.int8 / SmoothQuant outlier discussions, PyTorch forums)")


def act_fq():
    return FakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                        dtype=torch.quint8, qscheme=torch.per_tensor_affine,
                        averaging_constant=0.01)


def weight_fq():
    return FakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127,
                        dtype=torch.qint8, qscheme=torch.per_tensor_symmetric,
                        averaging_constant=0.01)


class QATLinear(nn.Linear):
    def __init__(self, d_in, d_out):
        super().__init__(d_in, d_out)
        self.weight_fake_quant = weight_fq()

    def forward(self, x):
        return nn.functional.linear(x, self.weight_fake_quant(self.weight), self.bias)


class QATMLP(nn.Module):
    def __init__(self, d_in, hidden, n_classes):
        super().__init__()
        self.quant_in = act_fq()
        self.fc1 = QATLinear(d_in, hidden)
        self.relu1 = nn.ReLU()
        self.fq1 = act_fq()
        self.fc2 = QATLinear(hidden, hidden)
        self.relu2 = nn.ReLU()
        self.fq2 = act_fq()
        self.head = QATLinear(hidden, n_classes)

    def forward(self, x):
        x = self.quant_in(x)
        x = self.fq1(self.relu1(self.fc1(x)))
        x = self.fq2(self.relu2(self.fc2(x)))
        return self.head(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=64, lr=2e-3, bs=64, steps=150, bad_step=15, n_bad=3),
           dict(hidden=96, lr=1e-3, bs=48, steps=170, bad_step=25, n_bad=1),
           dict(hidden=48, lr=3e-3, bs=96, steps=130, bad_step=10, n_bad=5)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(100 + seed)
    d_in, n_classes = 20, 6
    model = QATMLP(d_in, cfg["hidden"], n_classes)

    centers = 1.2 * torch.randn(n_classes, d_in, generator=g)
    batches = []
    for step in range(cfg["steps"]):
        y = torch.randint(0, n_classes, (cfg["bs"],), generator=g)
        x = centers[y] + torch.randn(cfg["bs"], d_in, generator=g)
        x = (x - x.mean(0)) / 1.6  # roughly standardised sensor features
        if step == cfg["bad_step"]:
            rows = torch.arange(cfg["n_bad"])
            x[rows, 3] = 999999.0  # logger sentinel for a disconnected channel
            if fixed:
                keep = (x.abs() < 1e3).all(dim=1)
                x, y = x[keep], y[keep]
        batches.append((x, y))

    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=cfg["steps"])
