"""Field-aware factorization machine (FFM) for CTR prediction trained with plain SGD. Each of the
F categorical fields owns a latent table per other field, and the pairwise term sums F*(F-1)/2
dot products of latent vectors. The per-example learning rate of a logistic-regression/libffm baseline
was scaled linearly with the batch size (lr = 0.5 * batch), which a linear model tolerates but
the quadratic pairwise term does not: the update to one latent vector is proportional to the other vectors, so each overshoot enlarges the
next gradient, the latent norms grow geometrically and the logits (and loss) blow up to inf/NaN
within a few dozen steps. The fixed run only lowers the SGD learning rate."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "libffm / Juan et al. 2016 FFM: SGD step size must be small (eta~0.2 with AdaGrad scaling); reports of FFM/FM diverging to NaN when reusing a logistic-regression learning rate"


class FFM(nn.Module):
    def __init__(self, field_sizes, k):
        super().__init__()
        self.F = len(field_sizes)
        self.offsets = torch.tensor([0] + list(torch.tensor(field_sizes).cumsum(0)[:-1].tolist()))
        n = sum(field_sizes)
        self.linear = nn.Embedding(n, 1)
        nn.init.zeros_(self.linear.weight)
        self.bias = nn.Parameter(torch.zeros(1))
        # one latent table per "seen-by" field
        self.latent = nn.ModuleList([nn.Embedding(n, k) for _ in range(self.F)])
        for e in self.latent:
            nn.init.normal_(e.weight, 0.0, 1.0 / k ** 0.5)

    def forward(self, ids):
        idx = ids + self.offsets
        out = self.bias + self.linear(idx).sum(dim=(1, 2))
        vs = [e(idx) for e in self.latent]  # vs[f][:, j] = latent of feature j seen by field f
        pair = 0.0
        for i in range(self.F):
            for j in range(i + 1, self.F):
                pair = pair + (vs[j][:, i] * vs[i][:, j]).sum(-1)
        return out + pair


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_fields = [4, 5, 6][seed % 3]
    field_sizes = [12 + 3 * i for i in range(n_fields)]
    k = [8, 6, 4][seed % 3]
    steps = [80, 100, 120][seed % 3]
    bs = [128, 96, 160][seed % 3]
    # ground-truth: logistic model with a couple of interactions
    w = [torch.randn(s, generator=g) for s in field_sizes]
    inter = torch.randn(field_sizes[0], field_sizes[1], generator=g)
    n = bs * 20
    ids = torch.stack([torch.randint(0, s, (n,), generator=g) for s in field_sizes], 1)
    logit = sum(w[f][ids[:, f]] for f in range(n_fields)) * 0.7 + inter[ids[:, 0], ids[:, 1]]
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    batches = []
    for s in range(steps):
        b = (s % 20) * bs
        batches.append((ids[b:b + bs], y[b:b + bs]))
    model = FFM(field_sizes, k)
    # per-example libffm step size (0.5) multiplied by the batch size ("linear scaling rule")
    lr = 2.0 if fixed else 0.5 * bs
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt,
                loss_fn=lambda out, t: F.binary_cross_entropy_with_logits(out, t),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
