"""Black-box model of an optical leveling amplifier (LA-2A-like compressor) with a GRU over
downsampled audio frames, regressing the processed signal with MSE; SGD with momentum.

Mechanism: the training pairs are read with `scipy.io.wavfile.read`, which returns float32 in
[-1, 1] for float WAVs but raw int16 PCM for 16-bit files. One early batch (a seed-dependent step
among the first four) came from 16-bit files and was not divided by 32768, so its inputs and
targets are ~1e4 times larger. Its loss is ~1e7 and its gradients are 1e4-1e5 times the normal
ones; one SGD step (then the momentum buffer for several more) throws the input-to-hidden GRU
weights and the output projection far away: the gates are driven into saturation and the output
layer is huge. The loss jumps from ~0.02 to ~1e3 and only creeps down for the rest of the run
(finite throughout), while the same run without the batch keeps learning.

ORIGIN: `gru`, the first module the un-normalised batch reaches (the fault is in the data, not
the layer; no layer is the cause).

Fix: normalise that batch like the others (int16 / 32768) - the loader's scaling applied to
every file; model, optimiser and schedule unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "gru"
SOURCE = ("scipy.io.wavfile.read returns int16 for PCM16 files and float32 for float WAVs "
          "(documented; frequent cause of un-normalised audio batches); one huge-gradient batch "
          "wrecking an SGD-trained RNN (Pascanu et al. 2013); compressor modelling after "
          "Hawley et al. 2019 'SignalTrain' and Wright et al. 2020.")


class CompressorGRU(nn.Module):
    def __init__(self, hidden, frame):
        super().__init__()
        self.gru = nn.GRU(frame, hidden, batch_first=True)
        self.head = nn.Linear(hidden, frame)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.head(h)


def _pairs(g, B, n_frames, frame):
    T = n_frames * frame
    t = torch.arange(T).float()
    x = torch.zeros(B, T)
    for _ in range(3):
        f = 0.02 + 0.2 * torch.rand(B, 1, generator=g)
        x = x + torch.rand(B, 1, generator=g) * torch.sin(f * t + 6.28 * torch.rand(B, 1, generator=g))
    env = 0.1 + 0.9 * (torch.sin(0.01 * t + 6.28 * torch.rand(B, 1, generator=g)) > 0).float()
    x = 0.3 * x * env
    # program-dependent compressor: slow envelope, gain = 1/(1 + 3*env)
    lvl = torch.zeros(B)
    ys = []
    for i in range(n_frames):
        fr = x[:, i * frame:(i + 1) * frame]
        lvl = 0.8 * lvl + 0.2 * fr.abs().mean(1)
        ys.append(fr / (1 + 3 * lvl[:, None]))
    y = torch.cat(ys, 1)
    return x.view(B, n_frames, frame), y.view(B, n_frames, frame)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(4000 + seed)
    hidden = [24, 32, 48][seed % 3]
    lr = [0.05, 0.1, 0.03][seed % 3]
    B = [16, 12, 20][seed % 3]
    frame = 16
    steps = 120
    bad_step = [1, 3, 2][seed % 3]
    torch.manual_seed(seed)
    model = CompressorGRU(hidden, frame)
    batches = []
    for s in range(steps):
        x, y = _pairs(g, B, 24, frame)
        if s == bad_step:
            x = torch.round(x * 32767.0)
            y = torch.round(y * 32767.0)  # int16 PCM, never divided by 32768
            if fixed:
                x, y = x / 32768.0, y / 32768.0
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
