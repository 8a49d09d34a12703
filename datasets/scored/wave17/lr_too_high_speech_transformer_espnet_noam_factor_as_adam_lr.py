"""Speech-Transformer encoder (conv2d subsampling + post-LN nn.TransformerEncoder, mean-pooled)
as a spoken-command classifier, trained with Adam.

Mechanism: the ESPnet recipe sets `transformer-lr: 10.0` (or 5.0 / 2.0), which is the *factor*
of the Noam schedule: lr = k * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5), a peak of a
few 1e-3. The user ported the model but passed the factor straight to torch.optim.Adam(lr=k) and
dropped the scheduler. Adam then moves every weight by ~k per step: update/weight ratios of ~1-10,
logits and attention scores become huge and the loss jumps far above its initial value and never
comes back. ORIGIN is None: no single module, the global step size is wrong.
Fix: the Noam peak lr (~1e-3) as the learning rate.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "ESPnet transformer-lr (Noam factor 10.0/5.0/2.0) passed directly as the Adam lr without the Noam scheduler"

N_MEL, N_CLS = 40, 6


class SpeechTransformer(nn.Module):
    def __init__(self, d, layers, heads):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv2d(1, d // 4, 3, stride=2), nn.ReLU(),
                                       nn.Conv2d(d // 4, d // 4, 3, stride=2), nn.ReLU())
        self.proj = nn.Linear(d // 4 * ((N_MEL - 1) // 2 - 1) // 2, d)
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, N_CLS)

    def forward(self, x):  # (B, T, F)
        z = self.subsample(x.unsqueeze(1))  # B,C,T',F'
        B, C, T, F = z.shape
        z = self.proj(z.permute(0, 2, 1, 3).reshape(B, T, C * F))
        return self.head(self.encoder(z).mean(1))


def _batch(g, n, T):
    y = torch.randint(0, N_CLS, (n,), generator=g)
    x = torch.randn(n, T, N_MEL, generator=g)
    for i in range(n):
        k = int(y[i])
        s = int(torch.randint(0, T // 2, (1,), generator=g))
        x[i, s:s + T // 3, 5 * k:5 * k + 6] += 2.0
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, layers, heads = [(64, 2, 4), (48, 3, 4), (32, 2, 2)][seed % 3]
    noam_factor = [10.0, 5.0, 2.0][seed % 3]
    bs = [16, 12, 24][seed % 3]
    steps = 60
    model = SpeechTransformer(d, layers, heads)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else noam_factor, betas=(0.9, 0.98), eps=1e-9)
    batches = [_batch(g, bs, 48) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
