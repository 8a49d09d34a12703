"""Proportional myoelectric control: regress CyberGlove finger-joint angles (Ninapro DB2-like) from
windowed sEMG features (log mean-absolute-value + waveform length of 12 electrodes) with a deep
ReLU MLP, MSE loss, plain SGD. Inputs and targets are standardised.

Mechanism: the weights of every Linear are re-initialised with U(-1, 1) (the
`RandomUniform(minval=-1, maxval=1)` initializer of a ported Keras/neuroevolution script). The
weight variance 1/3 is ~fan_in/6 times the ReLU-preserving value 2/fan_in, so each layer amplifies
the activation scale by sqrt(fan_in/6) ~ 4-6x; after 5-7 layers the initial predictions are
~1e4-1e5 times the target scale, the MSE is astronomically large, the first SGD step moves the
weights by orders of magnitude and the loss becomes inf/NaN within a few steps.

ORIGIN: "net.0", the first Linear: the geometric growth of the activation scale begins at the
first U(-1,1) layer and compounds through every later one.

Fix: Kaiming-uniform (fan_in, ReLU) init for hidden layers and Glorot for the output layer;
same data, lr and steps.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("He et al. 2015 (activation scale grows/shrinks geometrically with depth under a fixed-"
          "scale init); Keras RandomUniform(-1,1) initializers in ported EMG regression scripts; "
          "Ninapro DB2 glove-kinematics regression (Atzori et al. 2014)")


class EmgRegressor(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [5, 6, 7][seed % 3]
    width = [128, 96, 160][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 120
    n_ch, n_dof = 12, 6
    n = steps * bs
    # latent muscle synergies drive both the EMG amplitudes and the joint angles
    syn = torch.randn(n, 4, generator=g)
    mix = torch.randn(4, n_ch, generator=g).abs()
    act = torch.relu(syn @ mix + 0.5) + 0.05
    mav = act * (1 + 0.2 * torch.randn(n, n_ch, generator=g)).abs()
    wl = act * 3.0 * (1 + 0.2 * torch.randn(n, n_ch, generator=g)).abs()
    feats = torch.cat([torch.log(mav + 1e-3), torch.log(wl + 1e-3)], 1)
    feats = (feats - feats.mean(0)) / feats.std(0)
    kin = torch.tanh(syn @ torch.randn(4, n_dof, generator=g) * 0.7) + 0.1 * torch.sin(syn[:, :1] * 2)
    kin = (kin - kin.mean(0)) / kin.std(0)

    torch.manual_seed(seed)
    layers, d_in = [], 2 * n_ch
    for _ in range(depth):
        layers += [nn.Linear(d_in, width), nn.ReLU()]
        d_in = width
    layers.append(nn.Linear(d_in, n_dof))
    model = EmgRegressor(layers)
    linears = [m for m in model.net if isinstance(m, nn.Linear)]
    for i, m in enumerate(linears):
        if fixed:
            if i < len(linears) - 1:
                nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
            else:
                nn.init.xavier_uniform_(m.weight)
        else:
            nn.init.uniform_(m.weight, -1.0, 1.0)
        nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    batches = [(feats[i * bs:(i + 1) * bs], kin[i * bs:(i + 1) * bs]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
