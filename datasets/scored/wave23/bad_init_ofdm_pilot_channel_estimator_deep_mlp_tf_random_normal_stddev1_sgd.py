"""OFDM channel estimation: a deep ReLU MLP maps the least-squares (LS) estimates at the
pilot subcarriers to the full frequency response of every subcarrier (the "DNN channel
estimator" of Ye, Li & Juang 2018 and its many re-implementations).

Mechanism: the network was ported from TensorFlow 1.x code that built every layer with
`tf.Variable(tf.random_normal([n_in, n_out]))`, whose default stddev is 1.0, and the port
re-creates that with `nn.init.normal_(w, 0.0, 1.0)` for every weight (bias normal as well).
With fan-in 32..160 each ReLU layer multiplies the activation scale by about
sqrt(fan_in / 2) ~ 4..9, so after 5..7 layers the predicted channel taps are ~1e4..1e7
while the targets are O(1). The first MSE is ~1e8..1e14 and the first momentum-SGD step,
whose gradient carries the same product of huge weight norms, throws the weights further
out; the loss of the second step is already inf/NaN.

ORIGIN = "net.0": the first Linear is where the geometric growth starts (its outputs are
already ~sqrt(fan_in) times larger than its inputs and every following layer multiplies
that again); no later layer would be sane on its own input either, so the first one is
the start of the chain.

Fix: Kaiming (He) normal initialisation for the ReLU layers and zero biases, the PyTorch
equivalent of what the paper actually used; everything else (data, depth, width, lr,
steps) unchanged.
"""
import math

import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = (
    "Ye, Li & Juang, 'Power of deep learning for channel estimation and signal detection "
    "in OFDM systems' (IEEE WCL 2018) and its TF1 re-implementations that initialise "
    "weights with tf.random_normal (stddev=1.0); common forum reports of MSE 1e10 -> nan "
    "right at the start after porting such code to PyTorch with nn.init.normal_(w)."
)

N_SC = 64          # subcarriers
PILOT_EVERY = 4    # comb pilots -> 16 pilots


def _channels(g, n, n_taps, snr_db):
    """Multipath channel with exponential power-delay profile; returns (LS at pilots, H)."""
    delays = torch.arange(n_taps, dtype=torch.float32)
    pdp = torch.exp(-delays / 2.0)
    pdp = pdp / pdp.sum()
    taps = torch.complex(torch.randn(n, n_taps, generator=g), torch.randn(n, n_taps, generator=g))
    taps = taps * torch.sqrt(pdp / 2.0)
    h_time = torch.zeros(n, N_SC, dtype=torch.complex64)
    h_time[:, :n_taps] = taps
    H = torch.fft.fft(h_time, dim=1)                                    # (n, 64) complex
    pilots = H[:, ::PILOT_EVERY]
    noise_std = math.sqrt(10 ** (-snr_db / 10) / 2)
    noise = torch.complex(torch.randn(pilots.shape, generator=g), torch.randn(pilots.shape, generator=g))
    ls = pilots + noise_std * noise                                     # LS estimate (X=1 pilots)
    x = torch.cat([ls.real, ls.imag], dim=1)
    y = torch.cat([H.real, H.imag], dim=1)
    return x.float(), y.float()


class ChannelEstimatorMLP(nn.Module):
    def __init__(self, n_in, n_out, width, depth):
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
    depth = [5, 6, 7][seed % 3]
    width = [64, 96, 160][seed % 3]
    batch = [64, 48, 96][seed % 3]
    lr = [0.01, 0.006, 0.008][seed % 3]
    n_taps = [6, 8, 5][seed % 3]
    steps = 200

    g = torch.Generator().manual_seed(1000 + seed)
    batches = []
    for _ in range(steps):
        snr = float(torch.empty(1).uniform_(10.0, 25.0, generator=g))
        batches.append(_channels(g, batch, n_taps, snr))

    torch.manual_seed(seed)
    n_p = N_SC // PILOT_EVERY
    model = ChannelEstimatorMLP(2 * n_p, 2 * N_SC, width, depth)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                if m is model.net[-1]:
                    nn.init.xavier_normal_(m.weight)
                else:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)   # tf.random_normal default stddev=1.0
                nn.init.normal_(m.bias, 0.0, 1.0)

    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
