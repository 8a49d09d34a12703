"""ECoG finger-flexion decoding (BCI Competition IV dataset 4 style): a 1-D CNN without batch norm
takes 1 s windows of 48-channel band-power envelopes (z-scored) and regresses the flexion of the 5
fingers at the window end, trained with MSE and SGD with Nesterov momentum.

Mechanism: the learning rate (0.1-0.2) was copied from a recipe for the same CNN *with*
BatchNorm. Without normalisation the first large updates overshoot: the error of the first batches
pushes the biases and weights of the ReLU conv units so far negative that their pre-activations are
below zero for every input window. Dead ReLUs pass no gradient, so they never come back; within a
few dozen steps (almost) all units of the deeper conv blocks are silent, the network outputs its bias and
the loss sits at the variance of the flexion traces (a stall, no non-finite value). With a lower
learning rate the same network keeps its units alive and decodes the fingers.

ORIGIN: "features.4", the ReLU after the second Conv1d ("features.3"). Measured on this model,
its channels are the first to go silent for every window (the first conv block stays alive because
its inputs are z-scored), and once they are silent every later layer and the head receive zeros.

Fix: a learning rate suited to the un-normalised network (0.02); model, data and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.4"
SOURCE = ("Karpathy, CS231n notes 'dying ReLU: with a large learning rate up to 40% of the network "
          "can be dead'; lr taken from a BatchNorm recipe for a net without BN; ECoG finger "
          "flexion decoding (Kubanek et al. 2009; BCI Competition IV ds4; Xie et al. 2018 CNN-LSTM)")


class FlexionCNN(nn.Module):
    def __init__(self, n_ch, width, n_conv):
        super().__init__()
        layers, d = [], n_ch
        for i in range(n_conv):
            layers += [nn.Conv1d(d, width, 7, padding=3), nn.ReLU()]
            if i < n_conv - 1:
                layers.append(nn.AvgPool1d(2))
            d = width
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(width, 5)

    def forward(self, x):
        return self.head(self.features(x).mean(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_ch, T = 48, 50  # 48 electrodes, 1 s of 50 Hz band-power envelopes
    width = [32, 48, 64][seed % 3]
    n_conv = [3, 2, 3][seed % 3]
    batch = [32, 48, 64][(seed + 1) % 3]
    lr = 0.02 if fixed else [0.2, 0.15, 0.1][seed % 3]
    steps = 150

    spatial = torch.randn(5, n_ch, generator=g)
    torch.manual_seed(seed)
    model = FlexionCNN(n_ch, width, n_conv)

    batches = []
    for _ in range(steps):
        # finger flexion: smooth, correlated bumps; envelopes follow flexion with a lag
        f = torch.cumsum(torch.randn(batch, 5, T + 10, generator=g), -1)
        f = f - f.mean(-1, keepdim=True)
        f = f / (f.std(-1, keepdim=True) + 1e-6)
        env = torch.einsum("fc,bft->bct", spatial, f[:, :, :T]) / 5 ** 0.5
        env = env + 0.5 * torch.randn(batch, n_ch, T, generator=g)
        env = (env - env.mean((0, 2), keepdim=True)) / (env.std((0, 2), keepdim=True) + 1e-6)
        y = f[:, :, T - 1] * 1.5 + 0.5
        batches.append((env, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
