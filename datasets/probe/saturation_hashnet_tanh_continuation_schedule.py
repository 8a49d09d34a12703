"""HashNet-style deep hashing network whose tanh(beta * z) continuation schedule is advanced per iteration instead of per epoch.

Mechanism: deep hashing learns K-bit binary codes for retrieval.  Because sign() has no useful gradient, HashNet
(Cao et al., ICCV 2017) trains with h = tanh(beta * z) and slowly raises beta ("continuation") so that tanh
approaches sign only after the codes have become meaningful.  Here a 2-layer feature MLP on pre-extracted image
descriptors feeds a hash layer (Linear -> ScaledTanh) and the pairwise likelihood loss
log(1 + exp(theta_ij)) - s_ij * theta_ij, theta_ij = (a / K) * h_i . h_j  (s_ij = 1 for same-class pairs).
The schedule is meant to be beta = 1.5 ** epoch, but the module's counter is incremented on every forward call
and used as the epoch: beta = 1.5 ** iteration.  After ~10 steps beta is in the hundreds, after 20 in the
thousands.  While beta climbs (steps ~5-12) the few units with z ~ 0 pass gradients multiplied by beta: a short
burst of huge gradients that scrambles the codes (the loss jumps up).  Then tanh(beta * z) is saturated for
every unit, d tanh / dz = beta * (1 - h^2) underflows to exactly 0, no parameter below the hash layer gets any
gradient, the codes freeze at the sign of the scrambled features and the loss stays flat, above its start.
ORIGIN = "hash_act": the saturating ScaledTanh is where the gradient dies; everything below it stops learning
because nothing passes through it.
Fix: only the schedule is corrected (the counter advances once per epoch of `epoch_len` steps), so beta stays
small while the codes form and tanh saturates only late in training.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "hash_act"
SOURCE = ("Cao et al., 'HashNet: Deep Learning to Hash by Continuation' (ICCV 2017): tanh(beta z) with an increasing "
          "beta; the paper notes that large beta makes the tanh saturate and gradients vanish (ill-posed "
          "gradient of sign), hence the slow continuation.  Bug pattern: epoch-level schedule stepped per iteration.")


class ScaledTanh(nn.Module):
    def __init__(self, growth, epoch_len):
        super().__init__()
        self.growth = growth
        self.epoch_len = epoch_len      # 1 reproduces the bug: the "epoch" counter advances every call
        self.calls = 0
        self.beta = 1.0

    def forward(self, z):
        if self.training:
            self.beta = self.growth ** (self.calls // self.epoch_len)
            self.calls += 1
        return torch.tanh(self.beta * z)


class HashNet(nn.Module):
    def __init__(self, d_in, hidden, bits, epoch_len):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.hash_fc = nn.Linear(hidden, bits)
        self.hash_act = ScaledTanh(1.5, epoch_len)

    def forward(self, x):
        return self.hash_act(self.hash_fc(self.features(x)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    n_cls = 6 + seed % 5
    d_in = [48, 64, 80][seed % 3]
    hidden = [64, 96, 128][(seed + 1) % 3]
    bits = [16, 24, 32][seed % 3]
    bs = [48, 64][seed % 2]
    steps = 180 + 20 * (seed % 3)
    epoch_len = 30 + 5 * (seed % 3)
    lr = [0.02, 0.03][seed % 2]
    a = 10.0

    protos = torch.randn(n_cls, d_in, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = protos[y] + 1.2 * torch.randn(bs, d_in, generator=g)
        batches.append((x, y))

    model = HashNet(d_in, hidden, bits, epoch_len if fixed else 1)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(h, y):
        s = (y[:, None] == y[None, :]).float()
        theta = (a / h.shape[1]) * h @ h.t()
        off = 1.0 - torch.eye(h.shape[0])
        pair = F.softplus(theta) - s * theta
        return (pair * off).sum() / off.sum()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
