"""Traction e-motor + inverter efficiency-map surrogate: given an operating point (torque,
shaft speed, DC-link voltage, phase-current amplitude) predict the drive efficiency
(standardised), replacing the measured efficiency map in a vehicle energy model.  The model has a
physics-informed feature layer that converts the normalised inputs back to SI units (Nm, rad/s,
V, A) and forms all pairwise products with a batched outer product (mechanical power T*w,
copper-loss proxy I^2, iron-loss proxy w^2, ...), followed by BatchNorm and an MLP.  Training
uses torch.autocast(float16) to halve the memory of the big hyper-parameter sweep, without a
GradScaler.

Mechanism: under autocast the ``bmm`` of the outer product runs in float16.  Speeds above
~2450 rpm give w^2 > 65504 and torque*speed products of 1e5 W; these entries overflow to inf in
half precision, BatchNorm turns them into NaN and the loss is non-finite from the first batch.
(In float32 the same features are harmless: BatchNorm standardises them.)

ORIGIN: ``physics`` - the SI outer-product feature layer, where values first pass 65504.

Fix: run the physics feature layer in float32 (autocast disabled inside it, inputs cast to
float); the rest of the model stays under float16 autocast.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "physics"
SOURCE = ("Known pattern: fp16 autocast of products of physical quantities in SI units overflows "
          "65504 (PyTorch AMP docs: ops that 'can overflow in float16' should run in float32; "
          "forum threads on inf after matmul in autocast); e-machine efficiency-map surrogates")

SCALE = torch.tensor([350.0, 1257.0, 800.0, 450.0])   # Nm, rad/s, V, A full scale


class SIOuterProduct(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32
        self.register_buffer("scale", SCALE.clone())

    def _feat(self, x):
        si = x * self.scale
        outer = torch.bmm(si.unsqueeze(2), si.unsqueeze(1))      # (B, 4, 4) pairwise products
        iu = torch.triu_indices(4, 4)
        return torch.cat([si, outer[:, iu[0], iu[1]]], 1)

    def forward(self, x):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._feat(x.float())
        return self._feat(x)


class EfficiencySurrogate(nn.Module):
    def __init__(self, width, fp32):
        super().__init__()
        self.physics = SIOuterProduct(fp32)
        self.norm = nn.BatchNorm1d(14)
        self.mlp = nn.Sequential(nn.Linear(14, width), nn.GELU(), nn.Linear(width, width), nn.GELU(),
                                 nn.Linear(width, 1))

    def forward(self, x):
        return self.mlp(self.norm(self.physics(x))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    lr = [2e-3, 1e-3, 3e-3][seed % 3]
    bs = [128, 64, 96][seed % 3]
    steps = 100
    model = EfficiencySurrogate(width, fp32=fixed)

    batches = []
    for _ in range(steps):
        tq = torch.rand(bs, generator=g) * 2 - 1                  # +-350 Nm (motoring/regen)
        sp = torch.rand(bs, generator=g) * 0.95 + 0.05            # 60..12000 rpm
        vdc = torch.rand(bs, generator=g) * 0.5 + 0.45
        cur = (tq.abs() * 0.8 + 0.1 * sp + 0.05 * torch.rand(bs, generator=g)).clamp(max=1.0)
        x = torch.stack([tq, sp, vdc, cur], 1)
        p_mech = (tq * sp).abs()
        loss_w = 0.02 + 0.08 * cur ** 2 + 0.05 * sp ** 2 + 0.03 * sp * (1 - vdc)
        eff = p_mech / (p_mech + loss_w)
        y = (eff - 0.7) / 0.2 + 0.02 * torch.randn(bs, generator=g)
        batches.append((x, y))

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.SmoothL1Loss(), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
