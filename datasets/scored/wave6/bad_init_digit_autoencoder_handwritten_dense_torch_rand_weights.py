"""Dense autoencoder on 8x8 digit-like images built from a hand-written `Dense` layer
(nn.Parameter weight and bias, `x @ W + b`) with a sigmoid output, as in 'neural nets from
scratch' tutorials. The author initialises the weights with torch.rand(fan_in, fan_out) - uniform
on [0, 1), all positive, mean 0.5 - instead of a zero-mean, 1/sqrt(fan_in)-scaled draw. Every
pre-activation is then a large positive sum, ReLU passes all of it, and the scale multiplies by
~fan_in/2 per layer (~10 after encoder.0, ~1e2 at the code, ~1e4 at the output). The output sigmoid
sees logits of order 1e4 and returns exactly 1.0 for every pixel, its derivative is exactly 0, so
no gradient reaches any layer and the reconstruction loss is frozen at the 'all-white image'
value from step 0. Fix: kaiming-uniform init (zero mean, bound 1/sqrt(fan_in)), exactly what
nn.Linear does.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("'neural network from scratch' tutorials / forum reports of autoencoders whose loss never moves and "
          "whose output is a constant image because weights were initialised with torch.rand (all positive) "
          "instead of a scaled zero-mean init (Glorot & Bengio 2010; He et al. 2015)")


class Dense(nn.Module):
    def __init__(self, fan_in, fan_out, proper_init):
        super().__init__()
        if proper_init:
            bound = 1.0 / math.sqrt(fan_in)
            w = torch.empty(fan_in, fan_out).uniform_(-bound, bound)
            b = torch.empty(fan_out).uniform_(-bound, bound)
        else:
            w = torch.rand(fan_in, fan_out)
            b = torch.rand(fan_out)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(b)

    def forward(self, x):
        return x @ self.weight + self.bias


class AutoEncoder(nn.Module):
    def __init__(self, proper_init):
        super().__init__()
        self.encoder = nn.Sequential(Dense(64, 32, proper_init), nn.ReLU(), Dense(32, 8, proper_init), nn.ReLU())
        self.decoder = nn.Sequential(Dense(8, 32, proper_init), nn.ReLU(), Dense(32, 64, proper_init))

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.encoder(x)))


def _digits(g, templates, B):
    cls = torch.randint(0, 10, (B,), generator=g)
    img = templates[cls]
    sh = torch.randint(-1, 2, (2,), generator=g)
    img = torch.roll(img, shifts=(int(sh[0]), int(sh[1])), dims=(1, 2))
    img = img * (0.7 + 0.3 * torch.rand(B, 1, 1, generator=g)) + 0.08 * torch.rand(B, 8, 8, generator=g)
    return img.clamp(0, 1).reshape(B, 64)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    templates = (torch.rand(10, 8, 8, generator=g) < 0.3).float()
    steps = 300
    model = AutoEncoder(proper_init=fixed)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    batches = []
    for _ in range(steps):
        x = _digits(g, templates, 64)
        batches.append((x, x))
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.mse_loss(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
