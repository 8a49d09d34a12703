"""Byte tagger built from one "relufied" transformer-style block (ReLU Strikes Back, Mirzadeh et al.
2023): RMSNorm + causal short-convolution mixer, then an FFN whose activation is a shifted ReLU,
relu(x - b), used to raise activation sparsity for fast sparse inference. The shift b = 2.5 was
copied from a much larger model whose FFN pre-activations have a spread of several units; in this
model the FFN reads RMSNorm'd inputs through a default-initialised Linear, so its pre-activations
have std ~0.6 and essentially none of them exceed 2.5. Every FFN unit outputs 0 from the first step
and receives exactly zero gradient, so it can never recover. The tag (parity of one bit from each
of the last three bytes) is not linearly separable from the linear residual path, so without the
FFN the loss stays at ~log 2: a flat plateau, no NaN. Fixed: the shift set from the actual
pre-activation scale (b = 0.25)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "ffn.act"
SOURCE = ("Mirzadeh et al. 2023 'ReLU Strikes Back' (relufication, shifted ReLU for sparsity); "
          "dying ReLU from a threshold/bias far below the pre-activation range")

V, D, H, T = 16, 32, 96, 32


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class ShortConv(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.conv = nn.Conv1d(D, D, k, groups=D, padding=k - 1)
        self.proj = nn.Linear(D, D)

    def forward(self, x):
        return self.proj(self.conv(x.transpose(1, 2))[..., : x.shape[1]].transpose(1, 2))


class ShiftedReLU(nn.Module):
    def __init__(self, shift):
        super().__init__()
        self.register_buffer("shift", torch.tensor(float(shift)))

    def forward(self, x):
        return F.relu(x - self.shift)


class ReluFFN(nn.Module):
    def __init__(self, shift):
        super().__init__()
        self.up = nn.Linear(D, H)
        self.act = ShiftedReLU(shift)
        self.down = nn.Linear(H, D)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class ByteTagger(nn.Module):
    def __init__(self, shift):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.norm1, self.mixer = RMSNorm(D), ShortConv()
        self.norm2, self.ffn = RMSNorm(D), ReluFFN(shift)
        self.norm_f = RMSNorm(D)
        self.head = nn.Linear(D, 2)

    def forward(self, ids):
        x = self.embed(ids)
        x = x + self.mixer(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return self.head(self.norm_f(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ByteTagger(shift=0.25 if fixed else 2.5)
    steps, B = 200, 32

    def batch():
        ids = torch.randint(0, V, (B, T), generator=g)
        prev = torch.cat([torch.zeros(B, 1, dtype=torch.long), ids[:, :-1]], 1)
        prev2 = torch.cat([torch.zeros(B, 2, dtype=torch.long), ids[:, :-2]], 1)
        y = (ids & 1) ^ ((prev >> 1) & 1) ^ ((prev2 >> 2) & 1)
        return ids, y

    batches = [batch() for _ in range(steps)]

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, 2), y.reshape(-1))

    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
