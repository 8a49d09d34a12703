"""Binary restricted Boltzmann machine (12 visible, 16 hidden units) used as an associative memory for
four stored patterns and trained by backprop on the exact negative log-likelihood: the hidden units
are summed out analytically (free energy -F(v) = a.v + sum_j softplus(c_j + W_j v)) and with only
2^12 = 4096 visible states the partition function is enumerated, log Z = log sum_v exp(-F(v)). The
run uses CPU autocast fp16 to speed up the 4096-state sweep. The visible and hidden layers are
nn.Linear, so -F comes out of autocast in float16 and the hand-written torch.exp(-F).sum().log()
runs in half too (exp/sum are not cast to fp32 by CPU autocast). At initialisation (Hinton's guide:
small weights, visible bias log(p/(1-p)), negative hidden bias) log Z is ~6-8 and everything fits in
fp16. As the RBM carves out the stored patterns their free energies drop and log Z climbs past
log(65504) = 11.09 after ~50-130 steps: the sum over states overflows to inf, the loss is inf and
the backward fills the weights with NaN. No GradScaler is used (it could not help: the overflow is
in the forward). The fixed run evaluates the partition function in float32 (the same exp/sum/log on
-F.float()).
"""
import itertools
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "partition"
SOURCE = ("exact-likelihood RBM with enumerated partition function (Hinton 2010 'A practical guide to "
          "training RBMs' init); CPU/CUDA autocast leaving hand-written exp/sum in float16, cf. the "
          "many 'loss becomes inf with amp' reports")

NV, NH = 12, 16


class LogPartition(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.register_buffer("states", torch.tensor(list(itertools.product([0.0, 1.0], repeat=NV))))
        self.fp32 = fp32

    def forward(self, neg_free_energy):
        nf = neg_free_energy(self.states)          # (4096,), float16 under autocast
        if self.fp32:
            nf = nf.float()
        return torch.exp(nf).sum().log()


class RBM(nn.Module):
    def __init__(self, p_on, fp32_partition):
        super().__init__()
        self.visible = nn.Linear(NV, 1, bias=False)
        self.hidden = nn.Linear(NV, NH)
        nn.init.normal_(self.hidden.weight, std=0.01)
        nn.init.constant_(self.hidden.bias, -2.0)
        p = p_on.clamp(0.05, 0.95)
        with torch.no_grad():
            self.visible.weight.copy_(torch.log(p / (1 - p)).unsqueeze(0))
        self.partition = LogPartition(fp32_partition)

    def neg_free_energy(self, v):
        return self.visible(v).squeeze(-1) + F.softplus(self.hidden(v)).sum(-1)

    def forward(self, v):
        return {"neg_free_energy": self.neg_free_energy(v), "log_z": self.partition(self.neg_free_energy)}


def loss_fn(out, y):
    return out["log_z"].float() - out["neg_free_energy"].float().mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    patterns = (torch.rand(4, NV, generator=g) < 0.3).float()
    model = RBM(patterns.mean(0), fp32_partition=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    steps, B = 200, 128
    batches = []
    for _ in range(steps):
        z = torch.randint(0, 4, (B,), generator=g)
        batches.append((patterns[z], torch.zeros(B)))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
