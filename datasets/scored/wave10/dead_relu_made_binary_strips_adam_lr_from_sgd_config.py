"""MADE (Germain et al. 2015), a masked autoregressive MLP density model, learns 20-bit binary
occupancy strips in which each bit copies its left neighbour 90% of the time (marginals are
0.5, so the unconditional per-bit entropy is ln 2 while the conditional one is ~0.33 nats).
The two masked ReLU hidden layers are trained with Adam at lr=0.3, the learning rate of the
momentum-SGD config the script started from. With non-negative binary inputs, Adam's
sign-like first steps of size ~lr drive the weights and bias of almost every unit of
`hidden1` negative, so those ReLUs output 0 for every input; the outputs reduce to the per-bit
bias and the BCE sits near ln 2 per bit with no NaN. Fixed: Adam lr=2e-3, nothing else."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "hidden1"
SOURCE = ("MADE: Masked Autoencoder for Distribution Estimation (Germain et al. 2015); dying "
          "ReLU under a too-large Adam step ('MADE loss stuck at log 2' style reports)")


class MaskedLinear(nn.Linear):
    def __init__(self, n_in, n_out):
        super().__init__(n_in, n_out)
        self.register_buffer("mask", torch.ones(n_out, n_in))

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


class MADE(nn.Module):
    def __init__(self, d=20, h=128, seed=0):
        super().__init__()
        self.hidden1 = MaskedLinear(d, h)
        self.hidden2 = MaskedLinear(h, h)
        self.out = MaskedLinear(h, d)
        g = torch.Generator().manual_seed(seed)
        m_in = torch.arange(1, d + 1)
        m1 = torch.randint(1, d, (h,), generator=g)
        m2 = torch.randint(int(m1.min()), d, (h,), generator=g)
        self.hidden1.mask.copy_((m1[:, None] >= m_in[None]).float())
        self.hidden2.mask.copy_((m2[:, None] >= m1[None]).float())
        self.out.mask.copy_((m_in[:, None] > m2[None]).float())

    def forward(self, x):
        h = F.relu(self.hidden1(x))
        h = F.relu(self.hidden2(h))
        return self.out(h)


def _strips(g, n, d=20, p_copy=0.9):
    x = torch.zeros(n, d)
    x[:, 0] = (torch.rand(n, generator=g) < 0.5).float()
    for i in range(1, d):
        keep = torch.rand(n, generator=g) < p_copy
        x[:, i] = torch.where(keep, x[:, i - 1], 1 - x[:, i - 1])
    return x


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    model = MADE(seed=seed)
    steps, bs = 150, 64
    batches = []
    for s in range(steps):
        x = _strips(g, bs)
        batches.append((x, x))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3 if fixed else 0.3)
    return dict(model=model, optimizer=opt,
                loss_fn=lambda logits, x: F.binary_cross_entropy_with_logits(logits, x),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
