"""Music emotion recognition (static valence/arousal in [-1, 1], DEAM/PMEmo style) with a small
CNN over log-mel excerpts: conv + ReLU blocks -> pooling over frequency and time -> tanh hidden
layer -> tanh output (the bounded V/A range); MSE; SGD + momentum.

Mechanism: the temporal pooling was written as `h.sum(dim=-1)` ("bag of frames") instead of a
mean. The ReLU feature maps are non-negative, so summing over 100-200 frames gives pooled
features of ~20-60 with a large common positive offset. The tanh hidden layer and the tanh
output receive pre-activations of tens: every unit sits at +-1 for every excerpt, tanh' ~ 1e-9,
and the excerpt-dependent part of the features no longer reaches the output. The prediction is
a constant corner of the V/A square, gradients to the head and the CNN vanish, and the loss stays
at its starting level (finite), while the same model with mean pooling learns.

ORIGIN: `hidden`, the first tanh layer fed by the summed features (the first module that
saturates; the output tanh saturates with it).

Fix: average over time (`h.mean(dim=-1)`) - nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "hidden"
SOURCE = ("Sum pooling of non-negative ReLU features over long sequences into tanh units "
          "(saturation, Glorot & Bengio 2010); tanh-bounded valence/arousal regressors as in "
          "DEAM / MediaEval 'Emotion in Music' baselines (Aljanaki et al. 2017).")


class EmotionCNN(nn.Module):
    def __init__(self, width, hidden, fixed):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d((2, 1)),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
        self.hidden = nn.Linear(width, hidden)
        self.out = nn.Linear(hidden, 2)
        self.fixed = fixed

    def forward(self, x):
        h = self.conv(x).mean(dim=2)                        # pool frequency
        h = h.mean(dim=-1) if self.fixed else h.sum(dim=-1)  # pool time
        return torch.tanh(self.out(torch.tanh(self.hidden(h))))


def _batch(g, B, T):
    va = torch.rand(B, 2, generator=g) * 1.6 - 0.8
    f = torch.arange(32).float()[:, None]
    t = torch.arange(T).float()[None, :]
    bright = torch.exp(-f / (6 + 8 * (va[:, 0:1, None] + 1)))      # valence ~ brightness
    pulse = 0.5 + 0.5 * torch.sin(t * (0.3 + 0.5 * (va[:, 1:2, None] + 1)))  # arousal ~ tempo
    energy = 0.3 + 0.35 * (va[:, 1:2, None] + 1)
    mel = energy * bright * pulse + 0.05 * torch.rand(B, 32, T, generator=g)
    x = torch.log(mel + 1e-2)
    x = (x + 2.5) / 1.5
    return x.unsqueeze(1), va


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(13000 + seed)
    width = [8, 12, 16][seed % 3]
    hidden = [32, 48, 24][seed % 3]
    T = [128, 96, 160][seed % 3]
    B = [16, 24, 12][seed % 3]
    lr = [0.05, 0.03, 0.08][seed % 3]
    steps = 100
    torch.manual_seed(seed)
    model = EmotionCNN(width, hidden, fixed)
    batches = [_batch(g, B, T) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
