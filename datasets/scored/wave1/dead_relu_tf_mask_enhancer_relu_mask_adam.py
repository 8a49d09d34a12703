"""Time-frequency masking speech enhancer: a small 1-D conv network over noisy magnitude-spectrogram
frames (Conv1d over time with 64 frequency bins as channels -> ReLU -> Conv1d -> ReLU -> 1x1
Conv1d) predicts a mask that goes through a ReLU (an unbounded "ReLU mask", so that gains > 1 are
possible); the mask-layer bias is initialised to 1 so the model starts as the identity (output =
noisy input), and the loss is the MSE between mask * noisy and the clean magnitudes. Trained with
Adam at lr = 5e-2 and no warmup. At the start noisy > clean in every bin, so the gradient on the
mask bias and weights has the same sign for every time-frequency bin (all inputs are non-negative
magnitudes); Adam's first steps move every mask parameter by ~lr in that common direction and the
mask pre-activations overshoot below zero for every bin of every utterance. With the output ReLU
dead the estimate is exactly 0, no gradient reaches any layer, and the loss freezes at
mean(clean^2) -- finite, flat, forever. The fixed run uses lr = 1e-3; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mask_act"
SOURCE = ("Wang & Chen 2018 'Supervised Speech Separation Based on Deep Learning: An Overview' "
          "(unbounded masks); Conv-TasNet's ReLU mask option; known pattern: an output ReLU that dies "
          'makes the estimate identically zero')

NF, T = 64, 32


class MaskEnhancer(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(NF, 64, 5, padding=2)
        self.conv2 = nn.Conv1d(64, 64, 5, padding=2)
        self.mask = nn.Conv1d(64, NF, 1)
        self.mask_act = nn.ReLU()
        nn.init.constant_(self.mask.bias, 1.0)        # start as the identity mask (output = noisy input)

    def forward(self, noisy):
        h = torch.relu(self.conv2(torch.relu(self.conv1(noisy))))
        return self.mask_act(self.mask(h)) * noisy


def _make_batch(g, n):
    f = torch.arange(NF).float()
    clean = torch.zeros(n, NF, T)
    for i in range(n):
        f0 = 4 + 6 * float(torch.rand(1, generator=g))
        env = (torch.rand(T, generator=g) > 0.3).float() * (0.5 + torch.rand(T, generator=g))
        harm = sum(torch.exp(-(f - k * f0) ** 2 / 2.0) / k for k in range(1, 6))
        clean[i] = harm[:, None] * env[None, :]
    noise = 0.3 * torch.rand(n, NF, T, generator=g) * (1 + torch.rand(n, NF, 1, generator=g))
    return clean + noise, clean


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 16) for _ in range(10)]
    model = MaskEnhancer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 5e-2)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
