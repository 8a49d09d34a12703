"""QAT jet tagger for an FPGA trigger, written in the hls4ml/QKeras style in PyTorch.

Mechanism: every dense layer fake-quantises its weights to a fixed-point grid
(QKeras ``quantized_bits(4, 0, alpha=1)``: range [-1, 1), one LSB = 2**-3 = 0.125) with
a straight-through estimator on the rounding.  The weights are initialised with
``normal_(std=0.01)`` (a leftover from an old TF1 reference that used
``tf.truncated_normal(stddev=0.01)``).  Every hidden-layer latent weight is far below half
an LSB (0.0625 = 6 sigma; 3 sigma for the 6-bit head), so every quantised hidden-layer
weight (and nearly every head weight) is exactly 0 from step 0: all hidden
activations are 0, the straight-through gradient of each latent weight is
``grad_out x input`` where one of the two factors is always exactly 0, and only the
output bias receives a gradient.  The loss sits at the class-prior cross-entropy for the
whole run (a stall, no non-finite values), while the same model initialised the way
QKeras does by default trains.

ORIGIN: ``body.0`` -- the first quantised dense layer.  Its output is the first exactly
zero activation and everything downstream inherits the zero signal; the weight scale
chosen at init (for all layers, but visible first there) is where it starts.

Fix: Glorot-uniform initialisation (QKeras' default ``kernel_initializer``), which puts
the latent weights on the scale of the quantisation grid.  Same quantiser, data,
optimiser and steps.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "body.0"
SOURCE = ("hls4ml / QKeras fixed-point QAT (quantized_bits with few bits): weights initialised "
          "far below half an LSB all round to zero; known pattern from QKeras issues about "
          "quantised models that output a constant, and TF1 truncated_normal(stddev=0.01) init")


def _quant_bits(x, bits, integer):
    # QKeras quantized_bits(bits, integer, alpha=1), symmetric, with straight-through rounding
    step = 2.0 ** (integer - bits + 1)
    lo, hi = -(2.0 ** integer), 2.0 ** integer - step
    xc = torch.clamp(x, lo, hi)
    return xc + (torch.round(xc / step) * step - xc).detach()


class QDense(nn.Linear):
    def __init__(self, fin, fout, bits=4, integer=0):
        super().__init__(fin, fout)
        self.bits, self.integer = bits, integer

    def forward(self, x):
        w = _quant_bits(self.weight, self.bits, self.integer)
        b = _quant_bits(self.bias, 8, 2)
        return F.linear(x, w, b)


class QReLU(nn.Module):
    # QKeras quantized_relu(6, 2): [0, 4) in steps of 1/16, straight-through rounding
    def forward(self, x):
        step = 2.0 ** -4
        xc = torch.clamp(x, 0.0, 4.0 - step)
        return xc + (torch.round(xc / step) * step - xc).detach()


class JetTagger(nn.Module):
    def __init__(self, n_feat, width, depth, n_cls):
        super().__init__()
        layers, d = [], n_feat
        for _ in range(depth):
            layers += [QDense(d, width), QReLU()]
            d = width
        self.body = nn.Sequential(*layers)
        self.head = QDense(d, n_cls, bits=6, integer=1)

    def forward(self, x):
        return self.head(self.body(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    n_feat, n_cls = 16, 5
    width = [32, 48, 64][seed % 3]
    depth = [3, 2, 4][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = [160, 180, 150][seed % 3]

    # synthetic "jet substructure" features (already standardised, as in the hls4ml tutorial)
    # labelled by a fixed nonlinear rule
    proj = torch.randn(n_feat, 24, generator=g) / math.sqrt(n_feat)
    read = torch.randn(24, n_cls, generator=g) / math.sqrt(24)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n_feat, generator=g)
        logits = 3.0 * torch.tanh(x @ proj) @ read
        y = torch.distributions.Categorical(logits=logits * 2.0).sample()
        batches.append((x, y))

    torch.manual_seed(seed)
    model = JetTagger(n_feat, width, depth, n_cls)
    for m in model.modules():
        if isinstance(m, QDense):
            if fixed:
                nn.init.xavier_uniform_(m.weight)        # QKeras default glorot_uniform
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)     # ported TF1 truncated_normal(0.01)
            nn.init.zeros_(m.bias)

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
