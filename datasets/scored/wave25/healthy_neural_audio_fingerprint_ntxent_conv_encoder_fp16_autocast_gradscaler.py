"""Neural audio fingerprinting (contrastive): a small CNN encodes 1 s log-mel patches
into L2-normalised 64-d fingerprints; each batch holds N clean segments and their
degraded replays (background noise, gain, EQ tilt, time offset); NT-Xent loss with
temperature 0.1 and the self-similarity diagonal masked with -inf; Adam; trained under
``torch.autocast(float16)`` with a working dynamic GradScaler.

Why it looks suspicious but is healthy: the GradScaler starts at 2**16 with a short
growth interval, so some steps are skipped (the scaled fp16 gradients overflow, the
scaler halves its scale and the parameters do not move that step: exactly-zero
updates), and the similarity matrix holds -inf on its diagonal.  The -inf entries are
never a target and exp(-inf) = 0 inside the (fp32) cross-entropy, so nothing
non-finite reaches the loss; the scaler handles the overflowed steps as designed.  The
loss falls from ~ln(2N - 1) as matching segments are pulled together.

ORIGIN: None (healthy).

Fix: none needed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Chang et al. 2021 'Neural Audio Fingerprint for High-specific Audio Retrieval "
          "based on Contrastive Learning' (NT-Xent over clean/replayed segments); SimCLR "
          "NT-Xent with masked diagonal; torch.amp GradScaler documentation.")

N_MELS, FRAMES = 24, 16


class FingerprintCNN(nn.Module):
    def __init__(self, ch, dim):
        super().__init__()
        self.conv1 = nn.Conv2d(1, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, 2 * ch, 3, padding=1, stride=2)
        self.conv3 = nn.Conv2d(2 * ch, 2 * ch, 3, padding=1, stride=2)
        self.proj = nn.Linear(2 * ch, dim)

    def forward(self, x):
        h = F.relu(self.conv1(x.unsqueeze(1)))
        h = F.relu(self.conv2(h))
        h = F.relu(self.conv3(h))
        return F.normalize(self.proj(h.mean((2, 3))).float(), dim=1)


def ntxent(z, _unused, tau=0.1):
    n2 = z.shape[0]
    sim = z @ z.t() / tau
    sim = sim.masked_fill(torch.eye(n2, dtype=torch.bool), float("-inf"))
    idx = torch.arange(n2)
    target = (idx + n2 // 2) % n2
    return F.cross_entropy(sim.float(), target)


def _pairs(g, n, library):
    k = torch.randint(0, library.shape[0], (n,), generator=g)
    off = int(torch.randint(0, 4, (1,), generator=g))
    clean = library[k, :, off:off + FRAMES]
    tilt = torch.linspace(-1, 1, N_MELS)[None, :, None] * 0.5 * torch.randn(n, 1, 1, generator=g)
    noisy = library[k, :, off + 1:off + 1 + FRAMES] + tilt + 0.6 * torch.randn(n, N_MELS, FRAMES, generator=g) \
        + 0.5 * torch.randn(n, 1, 1, generator=g)
    return torch.cat([clean, noisy]), k


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2021 + seed)
    ch = [8, 12, 8][seed % 3]
    dim = [64, 48, 64][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    n = [24, 32, 16][seed % 3]
    steps = 80
    library = torch.randn(500, N_MELS, FRAMES + 5, generator=g)
    library = library + torch.roll(library, 1, 2)  # temporal smoothness
    model = FingerprintCNN(ch, dim)
    batches = [_pairs(g, n, library) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=10)
    return dict(model=model, optimizer=opt, loss_fn=ntxent, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
