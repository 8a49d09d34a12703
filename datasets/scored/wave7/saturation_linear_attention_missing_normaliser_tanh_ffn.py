"""A one-layer linear-attention regressor (Katharopoulos et al. 2020, feature map phi = elu + 1) reads a
256-token document of Zipf-distributed word ids and predicts, from the last position, a standardised
score (the share of one mid-frequency word minus the share of another), followed by a tanh
feed-forward block and a zero-initialised linear head. The re-implementation computes the numerator
phi(q)^T sum_j phi(k_j) v_j^T but dropped the normaliser phi(q)^T sum_j phi(k_j). Because phi(k) > 0
and the frequent words give every value channel a non-zero mean, the un-normalised sum grows with
the document length and is dominated by the same common-mode component for every document: the
tanh block's pre-activations are in the tens to hundreds with an input-independent sign, tanh' is
numerically zero, nothing below the tanh receives a gradient, and the head only sees constant +-1
features, so the loss does not come down. With the normaliser the attention output is a weighted
average of values, the tanh block works in its linear range and the score is learned."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "ffn.1"
SOURCE = ("Katharopoulos et al. 2020 'Transformers are RNNs' linear attention; dropping the "
          "sum-of-keys normaliser makes outputs scale with sequence length (RetNet drops it only "
          "together with a GroupNorm)")

V, D, T = 24, 16, 256


class LinearAttention(nn.Module):
    def __init__(self, d, normalise):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.normalise = normalise

    def forward(self, x, mask):
        q = F.elu(self.q(x[:, -1])) + 1                        # query of the last position
        k = (F.elu(self.k(x)) + 1) * mask.unsqueeze(-1)
        v = self.v(x)
        kv = torch.einsum("btd,bte->bde", k, v)                 # sum_j phi(k_j) v_j^T
        num = torch.einsum("bd,bde->be", q, kv)
        if self.normalise:
            num = num / (torch.einsum("bd,bd->b", q, k.sum(1)).unsqueeze(-1) + 1e-6)
        return self.o(num)


class Regressor(nn.Module):
    def __init__(self, normalise):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.attn = LinearAttention(D, normalise)
        self.ffn = nn.Sequential(nn.Linear(D, 32), nn.Tanh())
        self.head = nn.Linear(32, 1)
        nn.init.zeros_(self.head.weight)        # zero-init read-out: start from the mean prediction
        nn.init.zeros_(self.head.bias)

    def forward(self, ids, mask):
        return self.head(self.ffn(self.attn(self.emb(ids), mask))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Regressor(normalise=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    steps, bs = 150, 32
    zipf = torch.arange(1, V + 1, dtype=torch.float32) ** -1.3
    p = zipf / zipf.sum()
    a, b = 3, 4                                               # two mid-frequency words
    mu = p[a] - p[b]
    sd = ((p[a] + p[b] - mu ** 2) / T) ** 0.5
    batches = []
    for _ in range(steps):
        ids = torch.multinomial(zipf, bs * T, replacement=True, generator=g).view(bs, T)
        share = (ids == a).float().mean(1) - (ids == b).float().mean(1)
        mask = torch.ones(bs, T)
        batches.append(((ids, mask), (share - mu) / sd))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
