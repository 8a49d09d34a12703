"""Text-CAPTCHA breaker CNN (one softmax head per character), Adam lr copied from a BN model.

Mechanism: a classic captcha solver: two conv/pool blocks, a shared fully connected layer
with ReLU, and one 10-way (digit) classification head per character position; the loss is
the sum of the per-position cross-entropies. The user took Adam lr=2e-2..5e-2 from a
tutorial whose model had BatchNorm after every conv, but this network has no normalisation.
The very first Adam steps (every parameter moves by ~lr) make the summed loss jump, and
within ~5 steps the second conv block's pre-activations are negative everywhere: its ReLU
outputs exact zeros for every input and every position, then the shared FC ReLU dies too.
With no non-zero activation left the heads only see their biases, no gradient reaches the
backbone any more and the loss sits at n_chars * ln(10) for the rest of the run.

ORIGIN: `features.4`, the ReLU of the second conv block: it is the first layer whose units
are all dead (100% zeros after ~5 steps) and it cuts the gradient to everything below it;
the shared FC ReLU (`shared.1`) only dies afterwards because its input is all zeros.

Fix: Adam lr=2e-3 (what a norm-free network of this size tolerates), same run otherwise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.4"
SOURCE = ("Keras/PyTorch multi-head text-captcha solver tutorials (CNN + one softmax per "
          "character); Adam lr tuned for a BatchNorm variant reused on a BN-free copy -> all "
          "FC ReLUs die, loss stuck at n_chars*ln(10)")


class CaptchaCNN(nn.Module):
    def __init__(self, n_chars, c1, c2, hidden, H, W):
        super().__init__()
        self.n_chars = n_chars
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.shared = nn.Sequential(nn.Linear(c2 * (H // 4) * (W // 4), hidden), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(hidden, 10) for _ in range(n_chars)])

    def forward(self, x):
        h = self.shared(self.features(x).flatten(1))
        return torch.stack([head(h) for head in self.heads], dim=1)  # (B, n_chars, 10)


def captcha_loss(logits, target):
    # sum over character positions of the per-position cross-entropy
    return sum(F.cross_entropy(logits[:, k], target[:, k]) for k in range(logits.shape[1]))


def _render(g, n, n_chars, glyphs, H, W):
    y = torch.randint(0, 10, (n, n_chars), generator=g)
    img = 0.1 * torch.rand(n, 1, H, W, generator=g)  # background noise
    cell = W // n_chars
    for k in range(n_chars):
        dx = torch.randint(0, min(2, cell - 8 + 1), (n,), generator=g)
        dy = torch.randint(0, min(2, H - 10 + 1), (n,), generator=g)
        for i in range(n):
            x0 = k * cell + int(dx[i])
            y0 = int(dy[i])
            img[i, 0, y0:y0 + 10, x0:x0 + 8] += glyphs[int(y[i, k])]
    # random strike-through line, as in simple captcha generators
    rows = torch.randint(2, H - 2, (n,), generator=g)
    for i in range(n):
        img[i, 0, int(rows[i])] += 0.3
    return img.clamp(0, 1), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    cfg = [
        dict(n_chars=4, c1=16, c2=32, hidden=128, H=16, W=48, bs=32, lr=0.03, steps=90),
        dict(n_chars=5, c1=12, c2=24, hidden=96, H=16, W=60, bs=24, lr=0.02, steps=140),
        dict(n_chars=4, c1=8, c2=16, hidden=64, H=20, W=48, bs=48, lr=0.05, steps=85),
    ][seed % 3]
    H, W = cfg["H"], cfg["W"]
    model = CaptchaCNN(cfg["n_chars"], cfg["c1"], cfg["c2"], cfg["hidden"], H, W)
    glyphs = (torch.rand(10, 10, 8, generator=g) > 0.55).float() * 0.9
    batches = [_render(g, cfg["bs"], cfg["n_chars"], glyphs, H, W) for _ in range(cfg["steps"])]
    lr = 2e-3 if fixed else cfg["lr"]
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=captcha_loss, batches=batches,
                steps=cfg["steps"])
