"""4D-STEM thickness/tilt regressor: for every probe position the model takes the raw pixelated
diffraction pattern (electron counts, 32x32), applies a learnable "virtual detector" layer
(a Linear initialised with bright-field, annular dark-field and segmented masks of ones, as in
py4DSTEM-style virtual imaging), takes log1p of the integrated signals and regresses
standardised sample thickness and local tilt with a small MLP (MSE, AdamW). Training runs under
torch.autocast(float16) to halve the memory of the 4D data set; no GradScaler.

Mechanism: the virtual-detector Linear runs in float16 under autocast and sums hundreds of
pixels of raw counts. At low beam current the bright-field sum stays below 65504, but the scan
moves over regions recorded at higher dose (beam-current drift), and from a seed-dependent step
on the bright-field integral of some patterns exceeds float16's maximum: the Linear's output is
inf, log1p(inf) = inf, and the MLP turns it into inf/NaN in the loss.

ORIGIN: "detector", the virtual-detector Linear whose float16 output overflows.
Fix: autocast with bfloat16 (same range as float32) instead of float16; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "detector"
SOURCE = ("PyTorch AMP docs (float16 max 65504; use bf16 or keep ops in fp32); virtual "
          "detectors in 4D-STEM (py4DSTEM, Savitzky et al. 2021); NaN with autocast on "
          "un-normalised sums (PyTorch forum)")

S = 32


class VirtualDetectorNet(nn.Module):
    def __init__(self, n_det, width):
        super().__init__()
        self.detector = nn.Linear(S * S, n_det, bias=False)
        self.mlp = nn.Sequential(nn.Linear(n_det, width), nn.GELU(), nn.Linear(width, 2))
        yy, xx = torch.meshgrid(torch.arange(S) - S / 2 + 0.5, torch.arange(S) - S / 2 + 0.5,
                                indexing="ij")
        r = (yy ** 2 + xx ** 2).sqrt()
        ang = torch.atan2(yy, xx)
        masks = [r < 5, (r >= 5) & (r < 9), (r >= 9) & (r < 14)]
        for k in range(n_det - 3):
            a0 = -3.1416 + 2 * 3.1416 * k / (n_det - 3)
            masks.append((r < 9) & (ang >= a0) & (ang < a0 + 2 * 3.1416 / (n_det - 3)))
        with torch.no_grad():
            self.detector.weight.copy_(torch.stack([m.flatten().float() for m in masks]))

    def forward(self, dp):
        sig = self.detector(dp.flatten(1))
        return self.mlp(torch.log1p(sig.clamp_min(0)))


def _patterns(g, bs, dose):
    yy, xx = torch.meshgrid(torch.arange(S) - S / 2 + 0.5, torch.arange(S) - S / 2 + 0.5,
                            indexing="ij")
    thick = torch.rand(bs, generator=g)
    tilt = torch.rand(bs, 2, generator=g) * 2 - 1
    cy, cx = tilt[:, 0, None, None] * 1.5, tilt[:, 1, None, None] * 1.5
    r = ((yy - cy) ** 2 + (xx - cx) ** 2).sqrt()
    bf = torch.sigmoid((4.5 - r) * 3) * (1 - 0.6 * thick[:, None, None])
    df = 0.05 * thick[:, None, None] * torch.exp(-r / 8)
    lam = dose * (bf + df)
    counts = torch.poisson(lam, generator=g)
    y = torch.stack([(thick - 0.5) / 0.289, tilt.norm(dim=1) - 0.77], 1)
    return counts, y


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1500 + seed)
    n_det = [7, 9, 11][seed % 3]
    width = [32, 64, 48][seed % 3]
    bs = [16, 24, 32][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    steps = 120
    start_dose = [600.0, 450.0, 750.0][seed % 3]      # counts / pixel in the BF disk
    model = VirtualDetectorNet(n_det, width)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    batches = []
    for s in range(steps):
        dose = start_dose * (1 + 1.5 * s / steps)      # beam-current drift across the scan
        batches.append(_patterns(g, bs, dose))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
