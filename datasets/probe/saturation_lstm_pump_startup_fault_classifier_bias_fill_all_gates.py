"""LSTM fault classifier for centrifugal pumps: per-frame vibration features (band RMS,
kurtosis, crest factor, ... 6 channels, standardised) over one run-up recording; the
fault class (healthy, cavitation, misalignment, bearing) is read from the LSTM's last
hidden state.  The discriminating signature is a short transient during start-up, at the
beginning of the recording; the rest is steady-state vibration.

Bug: the user wanted the "unit forget-gate bias" trick and wrote
    for name, p in lstm.named_parameters():
        if "bias" in name: p.data.fill_(1.0)
which sets *all four* gate biases (input, forget, candidate, output) to 1 -- and does it
in both bias_ih and bias_hh, so every gate pre-activation starts at +2.  The input and
forget gates sit near sigma(2) ~ 0.88, the candidate near tanh(2) ~ 0.96, so the cell
state integrates a constant positive drive and climbs to ~7 within a few frames;
tanh(c) is pinned at +1 (tanh'(7) ~ 3e-6).  The gradient path through the cell state --
the LSTM's memory -- is cut, the start-up transient cannot be carried to the last frame,
and the classifier stays at chance (~ln 4) for the whole run.

ORIGIN: `lstm` -- the recurrent layer whose cell-state tanh (and candidate tanh) saturate.

Fix: fill only the forget-gate slice (indices H:2H, PyTorch gate order i, f, g, o) of
the bias vectors, leaving the other gate biases at their default init.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "lstm"
SOURCE = ("unit forget-gate bias (Gers et al. 2000; Jozefowicz et al. 2015) applied with "
          "bias.data.fill_(1) over the whole PyTorch LSTM bias vectors; pump / rotating-"
          "machinery fault diagnosis with LSTMs on vibration features")


class PumpFaultLSTM(nn.Module):
    def __init__(self, n_feat, hidden, layers, n_classes):
        super().__init__()
        self.lstm = nn.LSTM(n_feat, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.head(h[:, -1])


def _recordings(g, bs, T, n_classes=4, n_feat=6):
    y = torch.randint(0, n_classes, (bs,), generator=g)
    x = 0.5 * torch.randn(bs, T, n_feat, generator=g)
    x[..., 4] += 0.3 * torch.sin(torch.arange(T).float() / 3.0)   # steady running harmonic
    pos = torch.randint(1, 6, (bs,), generator=g)
    for i in range(bs):                                             # start-up transient
        x[i, pos[i]:pos[i] + 4, y[i]] += 3.0
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=64, layers=1, T=40, bs=32, lr=5e-3, steps=120),
           dict(hidden=48, layers=1, T=30, bs=32, lr=5e-3, steps=120),
           dict(hidden=32, layers=1, T=50, bs=32, lr=1e-2, steps=120)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PumpFaultLSTM(6, cfg["hidden"], cfg["layers"], 4)
    H = cfg["hidden"]
    for name, p in model.lstm.named_parameters():
        if "bias" in name:
            if fixed:
                p.data[H:2 * H].fill_(1.0)           # forget-gate slice only
            else:
                p.data.fill_(1.0)                    # every gate, in both bias_ih and bias_hh
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = [_recordings(g, cfg["bs"], cfg["T"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
