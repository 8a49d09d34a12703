"""Neural-network accumulator model of 2AFC random-dot-motion choices (drift-diffusion-inspired):
a small shared frame encoder turns each motion-energy frame (left/right energy + noise) into a
momentary evidence value, the accumulator sums it over all frames of the trial, and an nn.Sigmoid
turns the accumulated evidence into P(choose right), fit to the monkey's choices with nn.BCELoss.

Mechanism: the accumulator *sums* over 120-200 frames (a DDM integrates, so "sum" felt right),
so the decision variable scales with trial length: the per-frame encoder's output offset and
noise add up to |DV| of tens to hundreds at initialisation. The sigmoid is saturated at exactly
0.0 or 1.0 in float32 for almost every trial. Trials that are on the right side give zero loss and
zero gradient; trials on the wrong side give BCELoss's clamped -log(0) = 100 and also zero
gradient (sigma' = p(1-p) = 0). The loss sits at ~100 x error-rate and does not move. No NaN:
BCELoss clamps its log.

ORIGIN = "choice": the nn.Sigmoid that saturates; everything upstream is fine but receives no
gradient through it.

Fix: normalise the accumulated evidence by the number of frames (mean instead of sum), so the
decision variable is O(1) and the sigmoid operates in its sensitive range. Same model, loss,
data, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "choice"
SOURCE = ("Random-dot motion 2AFC (Shadlen & Newsome; Roitman & Shadlen 2002) accumulator models; "
          "the well-known nn.Sigmoid + nn.BCELoss saturation (PyTorch docs recommend "
          "BCEWithLogitsLoss; forum reports of BCELoss stuck at 100*error and zero gradients) "
          "triggered by summing instead of averaging evidence over frames")


class Accumulator(nn.Module):
    def __init__(self, hid, normalise):
        super().__init__()
        self.frame = nn.Sequential(nn.Linear(3, hid), nn.Tanh(), nn.Linear(hid, 1))
        self.choice = nn.Sigmoid()
        self.normalise = normalise

    def forward(self, x):  # x: (B, T, 3)
        ev = self.frame(x).squeeze(-1)  # momentary evidence
        dv = ev.mean(1) if self.normalise else ev.sum(1)
        return self.choice(dv)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(12000 + seed)
    T = [150, 200, 120][seed % 3]
    hid = [32, 48, 24][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = [1e-2, 8e-3, 1.2e-2][seed % 3]
    steps = 150
    coh = torch.tensor([0.0, 0.032, 0.064, 0.128, 0.256, 0.512])
    batches = []
    for _ in range(steps):
        c = coh[torch.randint(0, len(coh), (bs,), generator=g)]
        sgn = torch.where(torch.rand(bs, generator=g) < 0.5, -1.0, 1.0)
        c = c * sgn
        right = 1.0 + c[:, None] + 0.8 * torch.randn(bs, T, generator=g)
        left = 1.0 - c[:, None] + 0.8 * torch.randn(bs, T, generator=g)
        x = torch.stack([right, left, torch.ones(bs, T)], -1)
        # monkey's choices: psychometric function with lapse
        p_right = 0.02 + 0.96 * torch.sigmoid(20.0 * c)
        y = (torch.rand(bs, generator=g) < p_right).float()
        batches.append((x, y))
    torch.manual_seed(seed)
    model = Accumulator(hid, normalise=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCELoss(), batches=batches, steps=steps)
