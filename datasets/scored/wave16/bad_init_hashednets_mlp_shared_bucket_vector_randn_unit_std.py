"""HashedNets MLP (random weight sharing) whose shared bucket vectors were initialised randn.

Mechanism: HashedNets (Chen et al. 2015) compress a fully connected layer by letting a hash
function h(i, j) map every virtual weight W[i, j] to one of K shared real parameters
(``bucket``) with a sign hash xi(i, j): W[i, j] = xi(i, j) * bucket[h(i, j)].  The
hand-written layer creates ``self.bucket = nn.Parameter(torch.randn(K))``, i.e. every
virtual weight has std 1 instead of std sqrt(2 / fan_in).  Each hashed layer therefore
multiplies the activation scale by ~sqrt(fan_in / 2) (~10-14x); through 4-6 hashed
layers the logits reach 1e4-1e6 at step 0, the cross-entropy is huge, the first SGD
step (whose gradient on a shared bucket is the SUM over every virtual weight that hashes
to it) throws the buckets far away and the loss becomes inf/NaN within a few steps.

ORIGIN: ``layers.0``, the first hashed layer: its output is already ~sqrt(fan_in/2) times
too large, the growth starts there and compounds geometrically with depth.

Fix: initialise the buckets with the fan-in scaled std (Kaiming, std = sqrt(2 / fan_in)),
as the virtual matrix would have been initialised in the dense network.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("HashedNets, 'Compressing Neural Networks with the Hashing Trick' (Chen et al., ICML 2015); "
          "re-implementations whose hashed bucket parameters are created with torch.randn and explode")


class HashedLinear(nn.Module):
    def __init__(self, d_in, d_out, compression, seed, fixed):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        n_buckets = max(16, int(d_in * d_out * compression))
        # hash h(i, j) -> bucket id and sign hash xi(i, j), fixed (buffers)
        self.register_buffer("idx", torch.randint(0, n_buckets, (d_out, d_in), generator=g))
        self.register_buffer("sign", torch.randint(0, 2, (d_out, d_in), generator=g).float() * 2 - 1)
        if fixed:
            self.bucket = nn.Parameter(torch.randn(n_buckets, generator=g) * math.sqrt(2.0 / d_in))
        else:
            self.bucket = nn.Parameter(torch.randn(n_buckets, generator=g))
        self.bias = nn.Parameter(torch.zeros(d_out))

    def weight(self):
        return self.sign * self.bucket[self.idx]

    def forward(self, x):
        return F.linear(x, self.weight(), self.bias)


class HashedNet(nn.Module):
    def __init__(self, d_in, width, depth, n_cls, compression, seed, fixed):
        super().__init__()
        dims = [d_in] + [width] * depth
        self.layers = nn.ModuleList(
            [HashedLinear(a, b, compression, seed * 100 + i, fixed) for i, (a, b) in enumerate(zip(dims[:-1], dims[1:]))])
        self.act = nn.ReLU()
        self.head = HashedLinear(width, n_cls, compression * 4, seed * 100 + 99, fixed)

    def forward(self, x):
        for layer in self.layers:
            x = self.act(layer(x))
        return self.head(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(depth=4, width=256, comp=1 / 8, lr=0.01, bs=64, steps=80),
           dict(depth=5, width=192, comp=1 / 16, lr=0.005, bs=32, steps=100),
           dict(depth=3, width=384, comp=1 / 8, lr=0.015, bs=128, steps=60)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    d_in, n_cls = 196, 10          # 14x14 flattened digit-like images, standardised
    protos = torch.randn(n_cls, d_in, generator=g)
    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        x = 0.7 * protos[y] + torch.randn(cfg["bs"], d_in, generator=g)
        x = (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True)
        batches.append((x, y))
    model = HashedNet(d_in, cfg["width"], cfg["depth"], n_cls, cfg["comp"], seed, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
