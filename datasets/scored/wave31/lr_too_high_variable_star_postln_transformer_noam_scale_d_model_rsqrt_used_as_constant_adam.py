"""Variable-star classification from irregularly sampled single-band light curves (RR Lyrae ab,
classical Cepheid, eclipsing binary, long-period variable, constant star): an Astromer-style
Post-LN Transformer encoder (``nn.TransformerEncoderLayer``, norm_first=False) over
(magnitude, time) tokens with a sinusoidal encoding of the observation time, mean-pooled into a
linear classifier; Adam(betas=(0.9, 0.98)) and cross-entropy.

Mechanism: the author implemented the "Attention is all you need" (Noam) schedule
lr = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) by setting ``lr=d_model ** -0.5`` in the
optimiser and meaning to add the LambdaLR later; it never went in.  The run therefore trains at a
constant 0.125-0.18 with Adam and no warmup, ~25-30x the intended schedule's peak.  Adam's
normalised steps move every weight by ~0.1 per step; the attention logits and the Post-LN
residual stream are thrown around each step, the loss jumps to 3-7 within a few steps, the
encoder's pooled features stop carrying class information and the classifier settles at the
class-prior loss (ln 5) for the rest of the run, far above where the scheduled run gets.

ORIGIN: None: the optimiser's learning rate is the cause, not a module; all layers are overshot at
once.

Fix: the schedule as intended: lr multiplier d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
(Noam, warmup = 40-60 steps, scale factor 0.25) applied inside the optimiser's step; same
model, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Vaswani et al. 2017 Noam schedule (lr = d_model^-0.5 * ...); 'The Annotated Transformer' "
          "rate(); Post-LN transformers diverging without warmup (Liu et al. 2020, Xiong et al. "
          "2020); Astromer (Donoso-Oliva et al. 2023) light-curve transformer")

N_CLASSES = 5


def _light_curve(g, cls, n_obs):
    t = torch.sort(torch.rand(n_obs, generator=g) * 300.0).values          # days, irregular
    mag0 = 14 + 4 * torch.rand(1, generator=g).item()
    if cls == 0:      # RRab: sawtooth, P ~ 0.5 d
        p = 0.45 + 0.2 * torch.rand(1, generator=g).item()
        ph = (t / p) % 1
        m = 0.8 * torch.where(ph < 0.15, 0.5 - ph / 0.15, ph / 0.85 - 0.5 - 0.15 / 0.85)
    elif cls == 1:    # Cepheid: asymmetric, P 3-30 d
        p = 3 + 27 * torch.rand(1, generator=g).item()
        ph = 2 * math.pi * t / p
        m = 0.5 * torch.sin(ph) + 0.15 * torch.sin(2 * ph + 0.5)
    elif cls == 2:    # eclipsing binary: two dips
        p = 0.5 + 5 * torch.rand(1, generator=g).item()
        ph = (t / p) % 1
        m = 0.8 * torch.exp(-((ph - 0.25) / 0.03) ** 2) + 0.4 * torch.exp(-((ph - 0.75) / 0.03) ** 2)
    elif cls == 3:    # LPV: slow, large amplitude
        p = 100 + 200 * torch.rand(1, generator=g).item()
        m = 2.0 * torch.sin(2 * math.pi * t / p + torch.rand(1, generator=g).item() * 6)
    else:             # constant
        m = torch.zeros(n_obs)
    err = 0.02 + 0.05 * torch.rand(1, generator=g).item()
    m = mag0 + m + err * torch.randn(n_obs, generator=g)
    return t, m


class LCTransformer(nn.Module):
    def __init__(self, d_model, n_layers, n_heads):
        super().__init__()
        self.d_model = d_model
        self.mag_proj = nn.Linear(1, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=2 * d_model,
                                           dropout=0.0, batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.classifier = nn.Linear(d_model, N_CLASSES)
        nn.init.zeros_(self.classifier.weight)          # zero-init head: start at the prior
        nn.init.zeros_(self.classifier.bias)

    def time_encoding(self, t):
        i = torch.arange(self.d_model // 2, dtype=t.dtype)
        freq = 1.0 / (1000.0 ** (2 * i / self.d_model))
        ang = t[..., None] * freq
        return torch.cat([torch.sin(ang), torch.cos(ang)], -1)

    def forward(self, t, m):
        h = self.mag_proj(m[..., None]) + self.time_encoding(t)
        h = self.encoder(h)
        return self.classifier(h.mean(1))


class NoamAdam(torch.optim.Adam):
    """Adam that applies the Noam schedule itself (keeps the plain training loop)."""
    def __init__(self, params, d_model, warmup, factor, **kw):
        super().__init__(params, lr=0.0, **kw)
        self.d_model, self.warmup, self.factor, self.n = d_model, warmup, factor, 0

    @torch.no_grad()
    def step(self, closure=None):
        self.n += 1
        lr = self.factor * self.d_model ** -0.5 * min(self.n ** -0.5, self.n * self.warmup ** -1.5)
        for group in self.param_groups:
            group["lr"] = lr
        return super().step(closure)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d_model = [64, 32, 48][seed % 3]
    n_layers = [2, 3, 2][seed % 3]
    bs = [32, 48, 40][seed % 3]
    warmup = [50, 40, 60][seed % 3]
    n_obs = 48
    steps = 150

    labels = torch.randint(0, N_CLASSES, (bs * steps,), generator=g)
    lcs = [_light_curve(g, int(c), n_obs) for c in labels]
    t = torch.stack([a for a, _ in lcs])
    m = torch.stack([b for _, b in lcs])
    m = m - m.mean(1, keepdim=True)                      # per-star mean magnitude removed
    t = t - t[:, :1]

    torch.manual_seed(seed)
    model = LCTransformer(d_model, n_layers, 4)
    if fixed:
        opt = NoamAdam(model.parameters(), d_model, warmup, 0.25, betas=(0.9, 0.98), eps=1e-9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=d_model ** -0.5, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss()
    batches = [((t[i * bs:(i + 1) * bs], m[i * bs:(i + 1) * bs]), labels[i * bs:(i + 1) * bs])
               for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
