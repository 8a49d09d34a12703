"""Energy-based density model trained contrastively (Du & Mordatch 2019 objective):
loss = E(x+) - E(x-) + alpha * (E(x+)^2 + E(x-)^2), with an MLP energy network, negatives drawn from
a broad proposal around the data, and the forward + loss run under fp16 autocast to save memory.

Mechanism: the contrastive term pushes data energies down and negative energies up without bound;
only the L2 regulariser holds them, at |E| ~ 1/(2 alpha).  The user took alpha = 1e-3 from a paper
that trained in fp32, so the energies drift towards +-500.  The energy head's output is an fp16
tensor and once |E| passes ~256 its square passes 65504: E^2 becomes inf in half precision and
the loss is inf/NaN (GradScaler would not help: the overflow is in the forward).
ORIGIN: energy.4, the final Linear whose fp16 output is squared.
Fix: autocast with bfloat16 (same exponent range as fp32) instead of float16; nothing else
changes."""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "energy.4"
SOURCE = "Du & Mordatch 2019 'Implicit generation and generalization with EBMs' energy L2 regulariser; fp16 overflow of squared energies under AMP"


class ContrastiveEBM(nn.Module):
    def __init__(self, d_in, width):
        super().__init__()
        self.energy = nn.Sequential(nn.Linear(d_in, width), nn.SiLU(), nn.Linear(width, width), nn.SiLU(),
                                    nn.Linear(width, 1))

    def forward(self, x_pos, x_neg):
        return self.energy(x_pos).squeeze(-1), self.energy(x_neg).squeeze(-1)


def make_loss(alpha):
    def loss_fn(out, _):
        e_pos, e_neg = out
        return e_pos.mean() - e_neg.mean() + alpha * (e_pos ** 2 + e_neg ** 2).mean()
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [128, 64, 96][seed % 3]
    steps = 150
    d_in = 8
    model = ContrastiveEBM(d_in, width)
    mix = torch.randn(4, d_in, generator=g) * 2
    batches = []
    for _ in range(steps):
        comp = torch.randint(0, 4, (bs,), generator=g)
        x_pos = mix[comp] + 0.3 * torch.randn(bs, d_in, generator=g)
        x_neg = 3.0 * torch.randn(bs, d_in, generator=g)
        batches.append(((x_pos, x_neg), torch.zeros(bs)))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(1e-3), batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16)
