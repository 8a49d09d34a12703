"""ACTINN-style single-cell type annotation MLP whose weights were initialised with N(0, 1).

Mechanism: a 4-6 layer ReLU MLP maps log-normalised expression of a few hundred highly
variable genes to cell-type logits. The model was ported from TensorFlow 1 code that used
``tf.random_normal(shape)`` (default stddev = 1.0) for every weight matrix, and the port
re-initialises all Linear weights the same way. With fan-in 64-400, each layer multiplies the
activation scale by ~sqrt(fan_in/2) = 6-14, so the logits are ~1e5-1e7 at step 0, the
cross-entropy is astronomically large and the first SGD steps produce inf/NaN.

ORIGIN: ``net.0`` -- the first Linear layer, where the geometric growth of the activation scale
starts (every layer repeats it).

Fix: Kaiming-normal (fan-in, ReLU gain) initialisation of the Linear layers; same SGD, lr,
depth and data.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("ACTINN (Ma & Pellegrini 2020) and other TF1 single-cell classifiers ported to PyTorch "
          "with tf.random_normal's default stddev=1.0; 'loss is nan from the first epoch' reports "
          "on scRNA-seq annotation MLPs.")


class ACTINN(nn.Module):
    def __init__(self, n_genes, width, depth, n_types):
        super().__init__()
        layers, d = [], n_genes
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, n_types))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_genes = [400, 300, 500][seed % 3]
    width = [128, 96, 64][seed % 3]
    depth = [4, 5, 6][seed % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    bsz = [64, 96, 64][seed % 3]
    n_types = 8
    steps = 150
    model = ACTINN(n_genes, width, depth, n_types)
    for m in model.net:
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, mean=0.0, std=1.0)
            nn.init.zeros_(m.bias)

    base = torch.exp(torch.randn(n_genes, generator=g) - 1.0)
    profiles = base[None] * torch.exp(torch.randn(n_types, n_genes, generator=g) * 0.8)

    def make_batch():
        y = torch.randint(0, n_types, (bsz,), generator=g)
        lib = torch.exp(torch.randn(bsz, 1, generator=g) * 0.4 + 7.0)
        rate = profiles[y] / profiles[y].sum(1, keepdim=True) * lib
        counts = torch.poisson(rate, generator=g)
        x = torch.log1p(counts / counts.sum(1, keepdim=True).clamp_min(1) * 1e4)
        return x, y

    batches = [make_batch() for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
