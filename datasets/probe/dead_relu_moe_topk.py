"""dead_relu: a top-2-of-4 mixture-of-experts regressor whose output goes through a ReLU (to
keep the predicted rate non-negative); an early Adam overshoot pushes the ReLU's input below
zero for every sample and the whole model stops receiving gradient.

Model and data
    24 Gaussian features -> a small rate target y in [0, 0.3] (a CTR/conversion-rate style
    quantity, mean 0.10-0.13) with regime-dependent structure. Model: stem Linear+LayerNorm,
    a router Linear picking the top-2 of 4 experts per sample (softmax over the two selected
    logits), each expert Linear -> GELU -> Linear(., 1); the gate-weighted sum of the two
    expert outputs is the pre-activation z of ``out_act = nn.ReLU()``, the prediction.
    MSE loss, Adam lr 0.03-0.04, batch 64, 200 steps.

Mechanism (measured, seeds 0/1/2)
    1. At step 0, 72% / 27% / 55% of the samples have z > 0 (max z ~0.3); the loss is
       0.023 / 0.015 / 0.025.
    2. Adam's first steps move every parameter by ~lr: at step 1 z overshoots upward (max
       0.85 / 0.74 / 1.15, loss x2-6), the correction overshoots downward and from step 2-4 on
       z <= 0 for (almost) all samples. ReLU'(z) = 0 there, so no gradient reaches the
       experts, the router or the stem; Adam's momentum keeps pushing the few live samples
       down. The last batch with any z > 0 is step 13 / 44 / 94; after it the prediction is
       exactly 0 for every input (final max z = -1.9 / -4.5 / -2.6) and every gradient is 0.
    3. The loss then sits at mean(y^2) = 0.022-0.032, above its value at step 0: mean of the
       last 10% / min of the first 5 = 1.24-1.47 -> stall.
    With LeakyReLU(0.01) (fixed) the same overshoot happens, but negative z still gets a
    (small) gradient that Adam rescales: the output comes back (70-94% of the samples have
    z > 0 at the end) and the loss falls to 0.003-0.006 (r = 0.18-0.47).

ORIGIN
    "out_act": the ReLU that dies; every module upstream of it is alive (GELU experts, a
    LayerNorm stem) and only stops learning because out_act passes no gradient.

fixed=True
    Only the output activation changes: nn.LeakyReLU(0.01) instead of nn.ReLU(); lr,
    optimiser, init and data are identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = ("ReLU on the output of a non-negative regressor dies and the model predicts 0: "
          "ProteomicsML/ProteomicsML#203 ('Do not use ReLU activation for the final regression "
          "layer'), jvargasmu/population_estimation#68, keras-team/keras#3687; CS231n notes "
          "(high lr kills ReLUs, LeakyReLU as the fix); top-k MoE FFN as in Switch/Mixtral")


class Expert(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(h, 1)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class TopKMoERegressor(nn.Module):
    def __init__(self, n_in, d, h, n_experts, k, leaky):
        super().__init__()
        self.k = k
        self.stem = nn.Sequential(nn.Linear(n_in, d), nn.LayerNorm(d))
        self.router = nn.Linear(d, n_experts)
        self.experts = nn.ModuleList([Expert(d, h) for _ in range(n_experts)])
        self.out_act = nn.LeakyReLU(0.01) if leaky else nn.ReLU()

    def forward(self, x):
        x = self.stem(x)
        topv, topi = self.router(x).topk(self.k, dim=-1)
        gates = torch.softmax(topv, dim=-1)
        out = x.new_zeros(x.size(0))
        for e, expert in enumerate(self.experts):
            sel = (topi == e)
            rows = sel.any(-1).nonzero(as_tuple=True)[0]
            if rows.numel() == 0:
                continue
            w = (gates * sel).sum(-1)[rows]
            out = out.index_add(0, rows, w * expert(x[rows]).squeeze(-1))
        return self.out_act(out)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(8000 + seed)
    n_in, bs, steps = 24, 64, 200
    N = bs * steps
    x = torch.randn(N, n_in, generator=g)
    w = torch.randn(n_in, generator=g) / n_in ** 0.5
    z = torch.where(x[:, 0] > 0, x @ w, -(x @ w))
    y = 0.3 * torch.sigmoid(3.0 * z + 2.0 * (x[:, 1] > 0).float() - 1.0) ** 2
    batches = [(x[i*bs:(i+1)*bs], y[i*bs:(i+1)*bs]) for i in range(steps)]
    torch.manual_seed(seed)
    model = TopKMoERegressor(n_in, 32, 64, 4, 2, leaky=fixed)
    lr = [0.03, 0.04, 0.035][seed % 3]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
