"""Sinkhorn assignment network (Mena et al. 2018 "Gumbel-Sinkhorn"; Emami & Ranka 2018 "Sinkhorn
policy gradient") learning to solve worker->job linear assignment problems, trained with mixed
precision (float16 autocast) by cross-entropy against the Hungarian solution.

Mechanism: the score matrix S = phi(workers) psi(jobs)^T comes out of float16 linears/bmm, and
the Sinkhorn layer exponentiates S / tau (tau = 0.1-0.2) directly, without subtracting the row
max, and then alternates row/column normalisation. float16 exp overflows to inf as soon as S /
tau > ~11.1, i.e. once the network has become confident enough that one score exceeds ~1.1-2.2.
inf / inf in the first normalisation gives NaN: loss and gradients become non-finite after the
scores have grown during training. The same numbers are far from float32's range (exp overflows
at ~88), so it is purely a half-precision range problem.

ORIGIN: "sinkhorn" -- the parameter-free Sinkhorn module whose half-precision exp overflows.

Fix (fixed=True): the Sinkhorn layer runs in float32 (autocast disabled, scores cast with
.float()), the rest of the network keeps float16 autocast. Nothing else changes.
"""
import numpy as np
import torch
import torch.nn as nn
from scipy.optimize import linear_sum_assignment

CAUSE = "fp16_overflow"
ORIGIN = "sinkhorn"
SOURCE = ("Gumbel-Sinkhorn / Sinkhorn assignment networks ported to AMP: exp(S/tau) in fp16 "
          "overflows to inf and row normalisation gives NaN (common report for sinkhorn layers "
          "under torch.cuda.amp; fix is to run the Sinkhorn block in fp32)")


class Sinkhorn(nn.Module):
    def __init__(self, tau, iters, fp32):
        super().__init__()
        self.tau, self.iters, self.fp32 = tau, iters, fp32

    def _run(self, s):
        p = torch.exp(s / self.tau)
        for _ in range(self.iters):
            p = p / p.sum(dim=2, keepdim=True)
            p = p / p.sum(dim=1, keepdim=True)
        return p

    def forward(self, s):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._run(s.float())
        return self._run(s)


class AssignmentNet(nn.Module):
    def __init__(self, d_in, hidden, tau, fp32):
        super().__init__()
        self.worker_enc = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.job_enc = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.sinkhorn = Sinkhorn(tau, iters=10, fp32=fp32)
        self.scale = hidden ** -0.5

    def forward(self, workers, jobs):
        s = torch.bmm(self.worker_enc(workers), self.job_enc(jobs).transpose(1, 2)) * self.scale
        return self.sinkhorn(s)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    n = [6, 8, 7][seed % 3]
    d_in = 4
    hidden = [32, 48, 40][seed % 3]
    tau = [0.1, 0.15, 0.2][seed % 3]
    lr = [2e-3, 3e-3, 2.5e-3][seed % 3]
    batch = [32, 24, 40][seed % 3]
    steps = 150

    batches = []
    for _ in range(steps):
        w = rng.normal(size=(batch, n, d_in))
        j = rng.normal(size=(batch, n, d_in))
        tgt = np.zeros((batch, n, n))
        for b in range(batch):
            cost = ((w[b][:, None, :] - j[b][None, :, :]) ** 2).sum(-1)
            r, c = linear_sum_assignment(cost)
            tgt[b, r, c] = 1.0
        batches.append(((torch.tensor(w, dtype=torch.float32), torch.tensor(j, dtype=torch.float32)),
                        torch.tensor(tgt, dtype=torch.float32)))

    model = AssignmentNet(d_in, hidden, tau, fp32=fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(p, tgt):
        return -(tgt * torch.log(p.float() + 1e-6)).sum(dim=(1, 2)).mean() / tgt.shape[1]

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn, "batches": batches,
            "steps": steps, "amp_dtype": torch.float16, "scaler": None}
