"""SchNet-style continuous-filter convolution network for molecular energies: atom types go through
an nn.Embedding(sparse=True), interaction blocks build filters from Gaussian-RBF expanded distances
(shifted-softplus filter network, cosine cutoff), and the energy is the SUM of atomic
contributions (extensive). Molecules have 4-16 atoms, so the per-batch MSE on the total energy
swings with the size mix of each batch, and the embedding receives sparse gradients that touch
only the rows of elements present (rare elements get a gradient every few steps). Plain SGD
handles the sparse embedding gradients. Noisy, sparse, size-dependent - but a healthy run: the
loss falls well below its start and nothing is non-finite."""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "SchNet (Schuett et al. 2017) cfconv; sparse nn.Embedding gradients with torch.optim.SGD; extensive energy loss"

N_MAX, N_ELEM, N_RBF, CUTOFF = 16, 8, 20, 5.0


def ssp(x):
    return nn.functional.softplus(x) - math.log(2.0)


class CFConv(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.filter1 = nn.Linear(N_RBF, d)
        self.filter2 = nn.Linear(d, d)
        self.in2f = nn.Linear(d, d, bias=False)
        self.f2out = nn.Linear(d, d)
        self.dense = nn.Linear(d, d)

    def forward(self, h, rbf, fcut):
        W = self.filter2(ssp(self.filter1(rbf))) * fcut[..., None]      # [B,N,N,d]
        x = self.in2f(h)
        m = (W * x[:, None, :, :]).sum(2)
        return h + self.dense(ssp(self.f2out(m)))


class SchNet(nn.Module):
    def __init__(self, d=32, n_int=3):
        super().__init__()
        self.embedding = nn.Embedding(N_ELEM + 1, d, padding_idx=0, sparse=True)
        self.interactions = nn.ModuleList([CFConv(d) for _ in range(n_int)])
        self.out1 = nn.Linear(d, d // 2)
        self.out2 = nn.Linear(d // 2, 1)

    def forward(self, z, pos):
        mask = (z > 0).float()
        d = torch.cdist(pos, pos)
        pair = mask[:, :, None] * mask[:, None, :] * (1 - torch.eye(z.shape[1]))
        fcut = 0.5 * (torch.cos(math.pi * d / CUTOFF) + 1) * (d < CUTOFF).float() * pair
        rbf = torch.exp(-10.0 * (d[..., None] - torch.linspace(0, CUTOFF, N_RBF)) ** 2)
        h = self.embedding(z)
        for blk in self.interactions:
            h = blk(h, rbf, fcut)
        e_atom = self.out2(ssp(self.out1(h))).squeeze(-1)
        return (e_atom * mask).sum(1)


def make_batch(g, B):
    n = torch.randint(4, N_MAX + 1, (B,), generator=g)
    mask = torch.arange(N_MAX)[None] < n[:, None]
    probs = torch.tensor([0.4, 0.3, 0.12, 0.08, 0.05, 0.03, 0.015, 0.005])     # H, C, N, O, ... rare
    z = torch.multinomial(probs, B * N_MAX, replacement=True, generator=g).view(B, N_MAX) + 1
    z = z * mask
    pos = torch.randn(B, N_MAX, 3, generator=g) * (n[:, None, None].float() ** (1 / 3)) * 0.8
    ref = torch.tensor([0.0, -0.5, -1.0, -1.4, -1.9, -0.8, -2.5, -1.2, -3.0])
    d = torch.cdist(pos, pos) + torch.eye(N_MAX) * 100
    pm = (mask[:, :, None] & mask[:, None, :]).float()
    pairE = (torch.exp(-d) * pm).sum((1, 2)) * 0.5
    E = ref[z].sum(1) - pairE
    return (z, pos), E


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SchNet()
    steps = 150
    batches = [make_batch(g, 32) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
