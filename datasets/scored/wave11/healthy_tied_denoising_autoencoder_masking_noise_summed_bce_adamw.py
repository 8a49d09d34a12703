"""Healthy: a classic denoising autoencoder (Vincent et al. 2008) on 16x16 binary glyphs: masking noise
zeroes a fresh random 30% of the pixels of every input, the encoder is one sigmoid layer of 64
units, the decoder reuses the transposed encoder weights (tied weights) plus its own bias, and the
loss is the cross-entropy summed over the 256 pixels of each image (averaged over the batch),
trained with AdamW. Things that look alarming but are normal here: the loss is in the hundreds of
nats at the start and still ~35 at the end because it is a per-image sum over 256 pixels, every
batch has a different corruption pattern, and by the end ~95% of the sigmoid code activations sit
below 0.05 or above 0.95 (saturated-looking, but a nearly binary code is what a DAE learns for
binary glyphs and the reconstruction gradient still flows through the unsaturated units). It trains
fine. fixed=True returns the same run.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Vincent et al. 2008 'Extracting and composing robust features with denoising "
          "autoencoders' (masking noise, tied weights, cross-entropy reconstruction); deeplearning.net "
          "dA tutorial")

D_IN, D_CODE = 256, 64


class TiedDAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(D_IN, D_CODE)
        self.decoder_bias = nn.Parameter(torch.zeros(D_IN))

    def forward(self, x_noisy):
        code = torch.sigmoid(self.encoder(x_noisy))
        logits = F.linear(code, self.encoder.weight.t(), self.decoder_bias)
        return {"logits": logits, "code": code}


def loss_fn(out, x_clean):
    bce = F.binary_cross_entropy_with_logits(out["logits"], x_clean, reduction="none")
    return bce.sum(-1).mean()


def _glyphs(g, n_proto=12):
    base = (torch.rand(n_proto, 1, 6, 6, generator=g) > 0.5).float()
    return (F.interpolate(base, size=(16, 16), mode="nearest") > 0.5).float().view(n_proto, -1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    protos = _glyphs(g)
    model = TiedDAE()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    steps, B = 250, 64
    batches = []
    for _ in range(steps):
        z = torch.randint(0, len(protos), (B,), generator=g)
        flip = (torch.rand(B, D_IN, generator=g) < 0.02).float()
        clean = (protos[z] + flip) % 2
        keep = (torch.rand(B, D_IN, generator=g) > 0.3).float()
        batches.append((clean * keep, clean))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
