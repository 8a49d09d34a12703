"""Quantisation-aware training of a multi-label audio-event tagger (MLP on pooled log-mel
statistics) that simulates integer-only inference bit-exactly: activations are quantised
to uint8/int8 codes, weights to int8 codes, the layer does the integer GEMM
``acc = x_codes @ w_codes^T`` and only then rescales by s_x*s_w (Jacob et al. 2018 style),
with straight-through estimators on the rounding.  BCE-with-logits, AdamW, and the
forward/loss run under fp16 autocast with a GradScaler to speed training up.

Mechanism: under autocast the integer GEMM is executed as an fp16 matmul.  The codes
themselves are exact in fp16, but the int32 accumulator is not representable: a sum of
fan_in products of codes of magnitude up to 127*255 routinely exceeds 65504, so the fp16
result is +-inf for many units; inf * (s_x*s_w) stays inf and inf - inf in the next layer
gives NaN.  The loss is non-finite from the first step.  The GradScaler cannot help: the
overflow is in the forward pass, not in the gradients.

ORIGIN: ``layers.0`` -- the first integer-domain layer; its GEMM output is the first value
that overflows half precision.

Fix: run the integer GEMM (and the rescale) in float32 inside the autocast region
(``torch.autocast(enabled=False)`` + ``.float()``), which holds every int32 accumulator
value of this model exactly; everything else stays in fp16 autocast with the same scaler.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "layers.0"
SOURCE = ("Jacob et al. 2018 'Quantization and training of neural networks for efficient "
          "integer-arithmetic-only inference' (int32 accumulators); known pattern: simulating "
          "the integer GEMM under fp16 autocast, accumulator > 65504 -> inf")


def _ste_round(x):
    return x + (torch.round(x) - x).detach()


class IntLinear(nn.Linear):
    """int8 weights x (u)int8 activations with an integer-domain GEMM."""

    def __init__(self, fin, fout, signed_input, fp32_gemm):
        super().__init__(fin, fout)
        self.signed_input = signed_input
        self.fp32_gemm = fp32_gemm
        self.register_buffer("x_max", torch.tensor(1.0))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.x_max.mul_(0.95).add_(0.05 * x.detach().abs().max().float())
        qmax = 127.0 if self.signed_input else 255.0
        s_x = self.x_max / qmax
        x_codes = torch.clamp(_ste_round(x / s_x), -qmax if self.signed_input else 0.0, qmax)
        s_w = self.weight.detach().abs().max() / 127.0
        w_codes = torch.clamp(_ste_round(self.weight / s_w), -127.0, 127.0)
        if self.fp32_gemm:
            with torch.autocast("cpu", enabled=False):
                acc = x_codes.float() @ w_codes.float().t()
                return acc * (s_x * s_w) + self.bias
        acc = F.linear(x_codes, w_codes)           # under autocast: an fp16 GEMM
        return acc * (s_x * s_w) + self.bias


class IntTagger(nn.Module):
    def __init__(self, n_in, width, depth, n_tags, fp32_gemm):
        super().__init__()
        layers, d = [], n_in
        for i in range(depth):
            layers.append(IntLinear(d, width, signed_input=(i == 0), fp32_gemm=fp32_gemm))
            d = width
        self.layers = nn.ModuleList(layers)
        self.out = IntLinear(d, n_tags, signed_input=False, fp32_gemm=fp32_gemm)

    def forward(self, x):
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.out(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(15000 + seed)
    n_in, n_tags = 128, 10                       # mean+std of 64 log-mel bands
    width = [256, 192, 160][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    bs = [64, 96, 48][seed % 3]
    steps = 80

    mix = torch.randn(n_tags, n_in, generator=g)
    batches = []
    for _ in range(steps):
        tags = (torch.rand(bs, n_tags, generator=g) < 0.2).float()
        x = tags @ mix * 0.6 + torch.randn(bs, n_in, generator=g)
        batches.append((x, tags))

    torch.manual_seed(seed)
    model = IntTagger(n_in, width, depth, n_tags, fp32_gemm=fixed)
    with torch.no_grad():                        # calibrate the activation ranges once
        h = torch.cat([b[0] for b in batches[:4]])
        for layer in model.layers:
            layer.x_max.fill_(float(h.abs().max()))
            h = F.relu(F.linear(h, layer.weight, layer.bias))
        model.out.x_max.fill_(float(h.abs().max()))

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cpu")
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=scaler)
