"""Contrastive Predictive Coding on raw 1-D signals: strided Conv1d encoder + GRU
autoregressor + per-offset linear predictors, InfoNCE over the batch, SGD with momentum.

Mechanism: the encoder convolutions are initialised with ``normal_(std=0.01)`` and zero
bias (the old Caffe/"gaussian 0.01" recipe copied from an image codebase).  With fan-in of
channels*kernel ~ 100-300 each ReLU conv multiplies the signal scale by ~0.01*sqrt(fan_in/2)
~ 0.05-0.1 (less for the thin first layer), so after 5-6 convolutions the latent z_t is
~1e-6 of the input scale at step 0.  Every InfoNCE score is W_k c_t . z_{t+k} ~ 0, the
loss sits exactly at log(B), and the gradients
reaching the encoder weights are scaled by the same vanishing products, so SGD cannot
move them: the loss stalls at the chance level for the whole run.

ORIGIN: ``encoder.0`` - the first convolution; the shrinking starts there and every later
conv compounds it (the context GRU and predictors are default-initialised and healthy; they
simply see a vanishing input).

Fix: kaiming-normal (fan_in, ReLU) init of the encoder convolutions, as in the reference
CPC/wav2vec encoders.  Everything else is unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = ("CPC (van den Oord et al. 2018) reimplementations reporting InfoNCE stuck at log(N) "
          "from the first step; caffe-style gaussian(std=0.01) conv init without normalisation")


class CPC(nn.Module):
    def __init__(self, ch, n_layers, ctx, n_pred):
        super().__init__()
        layers = [nn.Conv1d(1, ch, 6, stride=2, padding=2), nn.ReLU()]
        for _ in range(n_layers - 1):
            layers += [nn.Conv1d(ch, ch, 4, stride=2, padding=1), nn.ReLU()]
        layers += [nn.Conv1d(ch, ch, 1)]
        self.encoder = nn.Sequential(*layers)
        self.gru = nn.GRU(ch, ctx, batch_first=True)
        self.pred = nn.ModuleList([nn.Linear(ctx, ch, bias=False) for _ in range(n_pred)])

    def forward(self, x):
        z = self.encoder(x).transpose(1, 2)          # B, T', C
        c, _ = self.gru(z)                             # B, T', ctx
        return z, c, torch.stack([p(c) for p in self.pred])   # K, B, T', C


def make_loss(t0):
    def infonce(out, target):
        z, c, preds = out
        B, T, C = z.shape
        K = preds.shape[0]
        loss = 0.0
        for k in range(1, K + 1):
            p = preds[k - 1, :, t0]                     # B, C
            f = z[:, t0 + k]                            # B, C
            logits = p @ f.T                            # B, B
            loss = loss + F.cross_entropy(logits, target)
        return loss / K
    return infonce


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ch = [48, 40, 32][seed % 3]
    n_layers = [4, 5, 4][seed % 3]
    ctx = [64, 48, 64][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [0.01, 0.008, 0.02][seed % 3]
    n_pred = 3
    steps = 180
    L = 32 * 2 ** n_layers // 2   # input length -> 16 latent frames
    model = CPC(ch, n_layers, ctx, n_pred)
    for m in model.encoder.modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)
    T_lat = L // 2 ** n_layers
    t0 = T_lat // 2 - 2

    t = torch.arange(L).float()
    batches = []
    for _ in range(steps):
        # each sequence: a few slowly drifting tones + noise (a CPC toy "speech")
        f0 = 0.02 + 0.1 * torch.rand(bs, 1, generator=g)
        f1 = 0.05 + 0.2 * torch.rand(bs, 1, generator=g)
        ph = 6.28 * torch.rand(bs, 2, generator=g)
        amp = 0.5 + torch.rand(bs, 2, generator=g)
        drift = 1 + 0.3 * torch.rand(bs, 1, generator=g) * t / L
        x = (amp[:, :1] * torch.sin(6.28 * f0 * drift * t + ph[:, :1])
             + amp[:, 1:] * torch.sign(torch.sin(6.28 * f1 * t + ph[:, 1:])))
        x = x + 0.2 * torch.randn(bs, L, generator=g)
        batches.append((x.unsqueeze(1), torch.arange(bs)))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(t0), batches=batches, steps=steps)
