"""Network-intrusion flow classifier (CICIDS-2017 style) - deep ReLU MLP whose
weights were initialised with ``normal_(0, 0.01)``.

Mechanism: the model was ported from a TF1 tutorial that builds every layer
with ``tf.random_normal(stddev=0.01)``.  With fan-in 64-128 and ReLU, each
layer multiplies the activation scale by about sqrt(fan_in/2)*0.01 ~ 0.06, so
after 7-9 layers the logits are ~1e-9 of the input scale, the softmax is
uniform and the gradients reaching every layer are vanishingly small.  SGD
with momentum cannot move the weights out of this regime within the run:
the cross-entropy sits at log(n_classes) (a stall, no non-finite value).

ORIGIN: ``net.0`` - the first Linear, where the geometric shrinking of the
activation scale starts (every later layer repeats it; the first is where the
signal is first lost).

Fix: Kaiming (He) normal init for the ReLU layers (zero biases kept), the
PyTorch-appropriate replacement for the hand-copied std=0.01.
"""
import math
import random

import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("TF1 intrusion-detection tutorials that build dense layers with tf.random_normal(stddev=0.01); "
          "vanishing activations with tiny Gaussian init in deep ReLU nets (He et al. 2015, Sec. 2.2; "
          "Glorot & Bengio 2010)")

N_FEAT = 48
N_CLS = 6  # benign, DoS, DDoS, PortScan, BruteForce, Botnet


def _flows(g, n, centers, mix):
    y = torch.randint(0, N_CLS, (n,), generator=g)
    z = centers[y] + 2.0 * torch.randn(n, N_FEAT, generator=g)
    # heavy-tailed, correlated flow statistics, already robust-scaled upstream
    x = z @ mix
    x = torch.sign(x) * torch.log1p(x.abs())
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    depth = r.choice([7, 8, 9])
    width = r.choice([64, 96, 128])
    lr = r.choice([0.01, 0.02, 0.03])
    bs = r.choice([64, 96, 128])
    steps = r.choice([150, 180, 200])

    g = torch.Generator().manual_seed(1000 + seed)
    centers = 1.5 * torch.randn(N_CLS, N_FEAT, generator=g)
    mix = torch.randn(N_FEAT, N_FEAT, generator=g) / math.sqrt(N_FEAT) + torch.eye(N_FEAT)
    batches = [_flows(g, bs, centers, mix) for _ in range(steps)]

    torch.manual_seed(seed)
    layers, d = [], N_FEAT
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, N_CLS))
    model = _Net(nn.Sequential(*layers))
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)   # tf.random_normal(stddev=0.01)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)


class _Net(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)
