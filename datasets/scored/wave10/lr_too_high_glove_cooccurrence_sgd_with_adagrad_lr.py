"""GloVe word vectors (Pennington et al. 2014): weighted least squares
f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2 over co-occurrence cells, with separate
word/context embedding tables and biases. The reference implementation uses AdaGrad with
lr 0.05; this port switched to plain SGD but kept a 'big' rate from the AdaGrad config of a
different run (lr=2.0) on a loss summed over the batch's cells. SGD steps on the embeddings
are now far larger than the vectors themselves, the dot products overshoot log X by more each
step, and the loss explodes to inf/NaN within a few dozen steps. Fixed: lr=0.05."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Pennington et al. 2014 GloVe (AdaGrad, lr 0.05, x_max=100, alpha=3/4); "
          "'GloVe PyTorch loss NaN' reports when the lr/optimiser is changed")


class GloVe(nn.Module):
    def __init__(self, vocab, dim=32):
        super().__init__()
        self.w = nn.Embedding(vocab, dim)
        self.c = nn.Embedding(vocab, dim)
        self.bw = nn.Embedding(vocab, 1)
        self.bc = nn.Embedding(vocab, 1)
        for e in (self.w, self.c):
            nn.init.uniform_(e.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.bw.weight)
        nn.init.zeros_(self.bc.weight)

    def forward(self, i, j):
        return (self.w(i) * self.c(j)).sum(-1) + self.bw(i).squeeze(-1) + self.bc(j).squeeze(-1)


def glove_loss(pred, target, x_max=100.0, alpha=0.75):
    logx, x = target
    f = torch.clamp(x / x_max, max=1.0) ** alpha
    return (f * (pred - logx) ** 2).sum()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11000 + seed)
    V, D = 300, 32
    model = GloVe(V, D)
    # synthetic co-occurrence counts from latent topics, Zipf-like frequencies
    topics = torch.randn(V, 6, generator=g)
    freq = 1.0 / torch.arange(1, V + 1).float() ** 0.8
    rate = 2000 * freq[:, None] * freq[None, :] * torch.exp(topics @ topics.t() / 3)
    X = torch.poisson(rate, generator=g)
    ii, jj = torch.nonzero(X > 0, as_tuple=True)
    counts = X[ii, jj]
    steps, bs = 200, 256
    batches = []
    for s in range(steps):
        k = torch.randint(0, ii.numel(), (bs,), generator=g)
        batches.append(((ii[k], jj[k]), (torch.log(counts[k]), counts[k])))
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if fixed else 2.0)
    return dict(model=model, optimizer=opt, loss_fn=glove_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
