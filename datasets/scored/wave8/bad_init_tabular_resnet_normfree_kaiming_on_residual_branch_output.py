"""Tabular ResNet (Gorishniy et al. 2021 'Revisiting Deep Learning Models for Tabular Data')
ported without its BatchNorm for small-batch serving, with a ``model.apply(init)`` that puts
``kaiming_normal_`` on *every* Linear, including the second Linear of each residual branch.  Each
block then adds a branch whose output variance is about twice that of its input, so the residual
stream variance roughly triples per block: after 10 blocks the head reads features ~240x larger
than the inputs and the first regression outputs are in the hundreds for standardised targets.
Momentum SGD with a normal tabular learning rate turns the first huge gradients into an overflow
within a few steps.  The fix changes only the initialisation of the branch output layers: zero
init (as torchvision's ``zero_init_residual`` / Fixup / SkipInit do), so every block starts as the
identity."""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "blocks.0.fc2"
SOURCE = ("Gorishniy et al. 2021 tabular ResNet; Zhang et al. 2019 'Fixup initialization'; "
          "torchvision ResNet zero_init_residual; pattern of norm-free residual MLPs exploding at init")

D_IN, D, N_BLOCKS = 16, 24, 10


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, 2 * D)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(2 * D, D)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(x)))


class TabResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(D_IN, D)
        self.blocks = nn.Sequential(*[Block() for _ in range(N_BLOCKS)])
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(D, 1))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TabResNet()

    def init(m):
        if isinstance(m, nn.Linear):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)
    model.apply(init)
    if fixed:
        for b in model.blocks:
            nn.init.zeros_(b.fc2.weight)

    w1 = torch.randn(D_IN, 8, generator=g) / D_IN ** 0.5
    w2 = torch.randn(8, generator=g) / 8 ** 0.5

    def sample(n):
        x = torch.randn(n, D_IN, generator=g)
        y = 1.5 * torch.tanh(x @ w1) @ w2 + 0.8 * x[:, 0] * x[:, 1]
        y = y + 0.1 * torch.randn(n, generator=g)
        return x, y

    steps = 150
    batches = [sample(128) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.005, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
