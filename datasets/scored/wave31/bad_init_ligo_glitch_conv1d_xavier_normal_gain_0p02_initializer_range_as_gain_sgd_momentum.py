"""Gravity-Spy-style glitch classifier on whitened 1-D strain segments (blip, chirp-like whistle,
scattered-light arches, tomte/koi-fish bursts, clean noise): a BN-free 1-D CNN trained with
SGD + momentum and cross-entropy.

Mechanism: the init helper was ported from a transformer codebase whose config has
``initializer_range = 0.02`` and calls ``nn.init.xavier_normal_(m.weight, gain=cfg.initializer_range)``
for every Conv1d / Linear.  Xavier already sets the fan-based std; the ``gain`` multiplies it, so
every layer's weights are ~50x too small and (with ReLU halving the variance) each layer shrinks the
activation scale by ~70x.  After 5-7 conv layers the logits are ~1e-10 of the signal, the softmax is
uniform, and the backpropagated gradients to every layer but the last shrink by the same factors: the
gradient reaching the classifier head is ~0 as well because its input features are ~0.  The loss sits
at log(n_classes) while the correctly initialised network learns the classes.

ORIGIN: ``features.0``, the first Conv1d.  All layers share the mis-scaled init, but the geometric
shrinkage of the activations starts at the first layer and compounds through every later one; the
first conv is where the signal scale first leaves its healthy range.

Fix: ``nn.init.kaiming_normal_(m.weight, nonlinearity='relu')`` (zero biases) instead of the
xavier call with gain=0.02; nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Known pattern: BERT/GPT 'initializer_range=0.02' reused as the gain of xavier_normal_ "
          "(gain multiplies the Glorot std); Gravity Spy glitch classes (Zevin et al. 2017) "
          "and 1-D CNN glitch classifiers on whitened strain")

N_CLASSES = 5


def _segment(g, cls, n_t):
    t = torch.linspace(-1, 1, n_t)
    x = torch.randn(n_t, generator=g)                      # whitened Gaussian noise
    amp = 2.0 + 2.0 * torch.rand(1, generator=g).item()
    t0 = (torch.rand(1, generator=g).item() - 0.5) * 0.8
    if cls == 1:      # blip: short broadband sine-Gaussian
        x += amp * torch.exp(-((t - t0) / 0.03) ** 2) * torch.cos(2 * math.pi * 40 * (t - t0))
    elif cls == 2:    # whistle: chirping tone over a long window
        f = 10 + 30 * (t + 1)
        x += 0.7 * amp * torch.exp(-((t - t0) / 0.4) ** 2) * torch.sin(2 * math.pi * f * (t - t0))
    elif cls == 3:    # scattered light: slow arches
        x += amp * torch.abs(torch.sin(2 * math.pi * 2.5 * (t - t0)))
    elif cls == 4:    # koi fish / tomte: loud low-frequency burst
        x += 1.5 * amp * torch.exp(-((t - t0) / 0.1) ** 2) * torch.cos(2 * math.pi * 8 * (t - t0))
    return x


class GlitchCNN(nn.Module):
    def __init__(self, layers, ch):
        super().__init__()
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(ch, N_CLASSES)

    def forward(self, x):
        return self.head(self.pool(self.features(x)).flatten(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_conv = [5, 6, 7][seed % 3]
    ch = [24, 32, 16][seed % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    bs = [32, 48, 40][seed % 3]
    steps = 120
    n_t = 256

    labels = torch.randint(0, N_CLASSES, (bs * steps,), generator=g)
    x = torch.stack([_segment(g, int(c), n_t) for c in labels])[:, None, :]

    torch.manual_seed(seed)
    layers, c_in = [], 1
    for i in range(n_conv):
        layers += [nn.Conv1d(c_in, ch, 7, padding=3), nn.ReLU()]
        if i % 2 == 1:
            layers.append(nn.MaxPool1d(2))
        c_in = ch
    model = GlitchCNN(layers, ch)

    initializer_range = 0.02
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.xavier_normal_(m.weight, gain=initializer_range)
            nn.init.zeros_(m.bias)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    batches = [(x[i * bs:(i + 1) * bs], labels[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
