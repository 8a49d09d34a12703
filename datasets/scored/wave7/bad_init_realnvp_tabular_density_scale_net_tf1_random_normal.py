"""RealNVP (affine coupling) density model for 8-dimensional tabular sensor data, ported from a TF1
code base whose dense layers used tf.random_normal_initializer() -- i.e. N(0, 1) weights, the TF1
default stddev of 1.0 -- reproduced here with nn.init.normal_(w, 0, 1) on every Linear of the
coupling networks. Each coupling computes z2 = x2 * exp(s(x1)) + t(x1) with an unbounded log-scale
s. With unit-variance weights the activations of the 64-wide ReLU conditioners grow by ~sqrt(64/2)
per layer, so s(x1) comes out at magnitudes of tens from step 0; exp(s) compounds across the four
couplings, the latent z overflows float32 and the negative log-likelihood is inf/NaN immediately.
Fix: PyTorch's fan-in scaled default init (kaiming-uniform) for the conditioner layers."""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "couplings.0.net.0"
SOURCE = ("Dinh et al. 2017 RealNVP; TF1 tf.random_normal_initializer default stddev=1.0 carried "
          "into a PyTorch port (common porting bug: unscaled N(0,1) dense weights)")

D = 8


class Coupling(nn.Module):
    def __init__(self, mask, hidden=64):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(D, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 2 * D))

    def forward(self, x):
        st = self.net(x * self.mask)
        s, t = st.chunk(2, dim=-1)
        s = s * (1 - self.mask)
        t = t * (1 - self.mask)
        z = x * torch.exp(s) + t
        return z, s.sum(-1)


class RealNVP(nn.Module):
    def __init__(self, n_layers=4, tf1_init=True):
        super().__init__()
        masks = [(torch.arange(D) % 2 == i % 2).float() for i in range(n_layers)]
        self.couplings = nn.ModuleList([Coupling(m) for m in masks])
        if tf1_init:
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0.0, 1.0)
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for c in self.couplings:
            x, ld = c(x)
            logdet = logdet + ld
        return x, logdet


def flow_nll(out, _y):
    z, logdet = out
    log_pz = -0.5 * (z ** 2).sum(-1) - 0.5 * D * math.log(2 * math.pi)
    return -(log_pz + logdet).mean()


def make_data(n, g):
    u = torch.randn(n, D, generator=g)
    x = torch.empty(n, D)
    x[:, 0] = u[:, 0]
    x[:, 1] = x[:, 0] ** 2 - 1 + 0.15 * u[:, 1]
    x[:, 2] = torch.sin(2 * x[:, 0]) + 0.1 * u[:, 2]
    x[:, 3] = u[:, 3]
    x[:, 4] = 0.8 * x[:, 3] + 0.2 * u[:, 4]
    x[:, 5] = torch.tanh(x[:, 3] * x[:, 0]) + 0.1 * u[:, 5]
    x[:, 6] = u[:, 6]
    x[:, 7] = torch.abs(x[:, 6]) + 0.1 * u[:, 7]
    return (x - x.mean(0)) / x.std(0)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n, bs, steps = 8192, 256, 200
    X = make_data(n, g)
    model = RealNVP(tf1_init=not fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, n, (bs,), generator=g)
        batches.append((X[idx], torch.zeros(bs)))
    return dict(model=model, optimizer=opt, loss_fn=flow_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
