"""ECoG speech decoding: a deep ReLU MLP maps lagged high-gamma envelopes (64 electrodes x 3 lags)
to 6 articulator kinematic traces (lips, jaw, tongue tip/body/dorsum, EMA-style), trained with MSE
and plain SGD.

Mechanism: the network was ported from a TensorFlow-1 script that initialised every dense layer with
`tf.random_normal(shape)` (stddev=1.0). In PyTorch this became `nn.init.normal_(w, 0.0, 1.0)` on
every Linear. With fan-in of 128-256 the pre-activation std grows by ~sqrt(fan_in/2) (~8-11x) per
ReLU layer, so after 5-7 layers the outputs are ~1e6-1e8 from step 0, the MSE is ~1e13+ and the
first SGD step sends the weights to inf/NaN: the loss is non-finite within a couple of steps.

ORIGIN: "net.0", the first Linear of the stack. The geometric growth starts at the very first
layer (its output already has std ~sqrt(fan_in) instead of ~1) and every later layer multiplies it;
the first layer is the earliest module whose activation scale is wrong.

Fix: Kaiming (He) normal initialisation for the ReLU layers (fan_in, gain sqrt(2)) and zero
biases, the PyTorch idiom for what the TF code meant to do; model, data, lr and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("TF1 -> PyTorch ports that replace tf.random_normal(stddev=1) initialisers literally "
          "(e.g. discussions 'loss becomes nan after first iteration, weights initialised with "
          "torch.randn'); He et al. 2015 on variance growth with depth; ECoG-to-articulator "
          "decoding as in Chartier et al. 2018 / Anumanchipalli et al. 2019")


class ArticulatoryDecoder(nn.Module):
    def __init__(self, n_in, width, depth, n_out):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, n_out))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_elec, n_lag, n_art = 64, 3, 6
    width = [128, 192, 256][seed % 3]
    depth = [5, 6, 7][seed % 3]
    batch = [64, 96, 128][(seed + 1) % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    steps = 120

    # latent articulator trajectories drive electrode high-gamma through a random spatial map
    mix = torch.randn(n_art, n_elec * n_lag, generator=g) / n_art ** 0.5
    torch.manual_seed(seed)
    model = ArticulatoryDecoder(n_elec * n_lag, width, depth, n_art)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
            else:  # literal port of tf.random_normal(shape) -> stddev 1.0
                nn.init.normal_(m.weight, 0.0, 1.0)
                nn.init.normal_(m.bias, 0.0, 1.0)

    batches = []
    for _ in range(steps):
        z = torch.randn(batch, n_art, generator=g)
        hg = torch.tanh(z @ mix) + 0.3 * torch.randn(batch, n_elec * n_lag, generator=g)
        hg = (hg - hg.mean(0)) / (hg.std(0) + 1e-6)  # z-scored high-gamma envelopes
        batches.append((hg, z))

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
