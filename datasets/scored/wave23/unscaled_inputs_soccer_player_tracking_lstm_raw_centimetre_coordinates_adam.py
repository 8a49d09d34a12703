"""Football player-position forecaster (LSTM) fed and trained on raw tracking coordinates in cm.

Mechanism: optical tracking data give player and ball positions in centimetres on a 10500 x
6800 pitch (origin at a corner) at 10 Hz. An LSTM reads the last 10 frames of (player x, y,
ball x, y) and a Linear head predicts the player's position 1 s later; the loss is MSE in cm.
Nothing is standardised: inputs are 0..10500, targets the same. The LSTM gates see
pre-activations of +-1e3..1e4, so the hidden state is a near-constant +-1 pattern, and the head
must produce values of several thousand from it; Adam moves each weight by ~lr per step, so the
prediction crawls by a fraction of a cm per step against errors of ~5000 cm. The loss starts at ~2.5e7
and is no lower at the end of the run (a stall, all finite).

ORIGIN = "lstm": the first module the raw-centimetre features reach (its gates saturate on them);
the target scale then keeps the head from catching up.

Fix: standardise inputs and targets with the pitch geometry (subtract the pitch centre, divide
by 1000 cm) -- same model, optimiser and steps; predictions are mapped back to cm afterwards.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "lstm"
SOURCE = ("Tracking-data tutorials (e.g. Metrica / Second Spectrum style cm coordinates) fed "
          "straight into RNNs; Keras/PyTorch forum threads 'LSTM loss huge and not decreasing, "
          "targets not normalised'; LeCun et al. 1998 'Efficient BackProp' on input scaling")

PITCH = torch.tensor([10500.0, 6800.0])


class TrackLSTM(nn.Module):
    def __init__(self, hid, layers):
        super().__init__()
        self.lstm = nn.LSTM(4, hid, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hid, 2)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(h[:, -1])


def _clips(g, n, T, horizon):
    steps = T + horizon
    ball = torch.zeros(n, steps, 2)
    ball[:, 0] = torch.rand(n, 2, generator=g) * PITCH
    bv = torch.randn(n, 2, generator=g) * 150
    player = torch.zeros(n, steps, 2)
    player[:, 0] = torch.rand(n, 2, generator=g) * PITCH
    pv = torch.zeros(n, 2)
    attract = 0.02 + 0.06 * torch.rand(n, 1, generator=g)       # how strongly he tracks the ball
    for t in range(1, steps):
        bv = 0.95 * bv + torch.randn(n, 2, generator=g) * 40
        ball[:, t] = (ball[:, t - 1] + bv).clamp(torch.zeros(2), PITCH)
        pv = 0.85 * pv + attract * (ball[:, t - 1] - player[:, t - 1]) * 0.3 \
            + torch.randn(n, 2, generator=g) * 10
        pv = pv.clamp(-80, 80)                                  # <= 8 m/s at 10 Hz
        player[:, t] = (player[:, t - 1] + pv).clamp(torch.zeros(2), PITCH)
    x = torch.cat([player[:, :T], ball[:, :T]], -1)
    y = player[:, T + horizon - 1]
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(15000 + seed)
    hid = [32, 64, 48][seed % 3]
    layers = [1, 1, 2][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 48, 32][seed % 3]
    T, horizon = 10, 10
    steps = 200
    torch.manual_seed(seed)
    model = TrackLSTM(hid, layers)
    x, y = _clips(g, bs * steps, T, horizon)
    if fixed:
        centre = PITCH / 2
        x = (x - centre.repeat(2)) / 1000.0
        y = (y - centre) / 1000.0
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
