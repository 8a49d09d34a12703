"""Healthy: a small dense autoencoder on 8x8 digit-like images (64-48-12-48-64, functional F.relu
inside forward, torch.sigmoid on the output) trained with pixel-wise binary cross-entropy and Adam.
Background pixels are almost exactly 0 and stroke pixels close to 1, so within ~100 steps the
decoder drives most output logits to large magnitudes: by the end ~80% of the output logits have |z|
> 3 and ~40-45% of the sigmoid outputs sit below 0.01 or above 0.99, where the local derivative
sigma'(z) is tiny. This LOOKS like output saturation, but with BCE the gradient reaching the logit
is (sigmoid(z) - x), not sigma'(z) * (...): it stays proportional to the reconstruction error and
vanishes only where the pixel is already right, so the saturated units are simply the ones that are
done. The loss falls from ~0.69 to ~0.1. There is nothing to fix.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch VAE/autoencoder examples on MNIST (sigmoid decoder + binary cross-entropy); the "
          "cross-entropy-cancels-the-sigmoid-derivative argument (Bishop 1995, Nielsen 'Neural Networks and Deep "
          "Learning' ch. 3)")


class DenseAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Linear(64, 48)
        self.enc2 = nn.Linear(48, 12)
        self.dec1 = nn.Linear(12, 48)
        self.dec2 = nn.Linear(48, 64)

    def forward(self, x):
        code = F.relu(self.enc2(F.relu(self.enc1(x))))
        return torch.sigmoid(self.dec2(F.relu(self.dec1(code))))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    templates = (torch.rand(10, 8, 8, generator=g) < 0.3).float()

    def sample(B):
        cls = torch.randint(0, 10, (B,), generator=g)
        img = templates[cls]
        flip = (torch.rand(B, 8, 8, generator=g) < 0.01).float()
        img = (img - flip).abs()
        img = img * (0.9 + 0.1 * torch.rand(B, 1, 1, generator=g))
        return img.reshape(B, 64)

    steps = 250
    batches = []
    for _ in range(steps):
        x = sample(64)
        batches.append((x, x))
    model = DenseAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return dict(model=model, optimizer=opt,
                loss_fn=lambda out, y: F.binary_cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
