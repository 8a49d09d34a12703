"""Animal-behaviour classifier on collar accelerometry: post-LN transformer, AdamW at 2e-2..1e-1, no warmup.

Mechanism: tri-axial accelerometer windows from GPS/acc collars (e.g. on goats, cattle or wild
ungulates) are cut into short patches, embedded, passed through a small post-LayerNorm
transformer encoder (``nn.TransformerEncoderLayer`` defaults, norm_first=False) and mean-pooled
into behaviour classes (resting, grazing, walking, running, grooming, ruminating). The author
used AdamW at lr 2e-2..1e-1 with no warmup, the setting of the BatchNorm 1D-CNN baseline in the same
repository. Post-LN transformers are known to need warmup: the first Adam steps (size ~lr for
every weight, regardless of the gradient scale) rotate the attention and feed-forward weights
so much that the residual stream is dominated by a few directions, the attention becomes
uniform or one-hot, and the representation collapses to the same vector for every window. The
loss then sits at the entropy of the class prior for the rest of the run (a stall; all values
finite) while the same model at 5e-4 learns the behaviours.

ORIGIN = None: the update size is wrong for every parameter at once (Adam normalises each update
to ~lr); no single module starts it.

Fix: lr = 5e-4 (AdamW, same everything else; a warmup would also do).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Xiong et al. 2020 'On Layer Normalization in the Transformer Architecture' (post-LN needs "
          "warmup); Liu et al. 2020 'Understanding the difficulty of training transformers'; "
          "accelerometer behaviour classification on collared animals (e.g. Kamminga et al. 2018)")

N_CLS = 6


class AccTransformer(nn.Module):
    def __init__(self, d_model, n_layers, patch):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(3 * patch, d_model)
        self.pos = nn.Parameter(torch.randn(1, 64, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, 4, 2 * d_model, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, N_CLS)

    def forward(self, x):                                   # x: (B, T, 3)
        b, t, _ = x.shape
        p = x.reshape(b, t // self.patch, 3 * self.patch)
        h = self.embed(p) + self.pos[:, :p.shape[1]]
        h = self.encoder(h)
        return self.head(h.mean(1))


def _windows(g, n, T):
    y = torch.randint(0, N_CLS, (n,), generator=g)
    t = torch.arange(T).float()[None]
    freq = torch.tensor([0.0, 0.6, 1.8, 3.5, 1.0, 0.8])[y][:, None]     # Hz-like gait frequency
    amp = torch.tensor([0.05, 0.3, 0.6, 1.2, 0.4, 0.2])[y][:, None]
    phase = 6.283 * torch.rand(n, 1, generator=g)
    pitch = torch.tensor([0.0, -0.8, 0.1, 0.2, 0.5, -0.3])[y][:, None]  # head down when grazing
    sig = amp * torch.sin(2 * math.pi * freq * t / 20 + phase)
    burst = (y == 4).float()[:, None] * (torch.rand(n, T, generator=g) < 0.05).float() * 1.5
    ax = sig + 0.15 * torch.randn(n, T, generator=g)
    ay = 0.5 * sig.roll(3, 1) + burst + 0.15 * torch.randn(n, T, generator=g)
    az = 1.0 + pitch + 0.3 * sig.abs() + 0.15 * torch.randn(n, T, generator=g)
    x = torch.stack([ax, ay, az], -1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(9000 + seed)
    d_model = [64, 48, 64][seed % 3]
    n_layers = [2, 3, 3][seed % 3]
    patch = [8, 10, 8][seed % 3]
    T = patch * 12
    bs = [32, 24, 40][seed % 3]
    lr = 5e-4 if fixed else [5e-2, 2e-2, 1e-1][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = AccTransformer(d_model, n_layers, patch)
    x, y = _windows(g, bs * steps, T)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
