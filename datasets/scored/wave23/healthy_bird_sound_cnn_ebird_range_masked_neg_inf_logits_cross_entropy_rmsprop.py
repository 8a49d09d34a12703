"""Healthy: bird-sound CNN whose logits for species outside the site's range are set to -inf.

What a naive monitor would flag: the model's output contains -inf (BirdNET-style range
filtering: each recording comes with a mask of the species that occur at its location and
season, and the logits of all others are ``masked_fill``-ed with -inf before the loss). Every
batch has -inf outputs, and the softmax assigns exactly 0 probability to those classes.

Why it is healthy: the target species of a recording is always inside its own range mask, so
``cross_entropy`` (log_softmax) never reads a -inf at the target index; log_softmax handles -inf
entries exactly (exp(-inf) = 0), their gradient is exactly 0, and no NaN or inf ever reaches the
loss or the parameters. The loss is finite from the first step and falls steadily; RMSprop,
small 2D CNN on log-mel patches.

ORIGIN = None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("BirdNET / Merlin style location-and-season species filters applied as -inf logit "
          "masks (Kahl et al. 2021); PyTorch docs: cross_entropy/log_softmax handle -inf logits "
          "whose target probability is 0")

N_SP = 24
N_REGION = 6


class BirdCNN(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.BatchNorm2d(2 * ch), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * ch, 2 * ch, 3, padding=1), nn.BatchNorm2d(2 * ch), nn.ReLU(),
        )
        self.head = nn.Linear(2 * ch, N_SP)

    def forward(self, spec, in_range):
        h = self.features(spec).amax((2, 3))
        logits = self.head(h)
        return logits.masked_fill(~in_range, float("-inf"))


def _recordings(g, n, ranges):
    region = torch.randint(0, N_REGION, (n,), generator=g)
    mask = ranges[region]                                   # (n, N_SP) bool
    # the recorded species is one that occurs in the region
    probs = mask.float() / mask.float().sum(1, keepdim=True)
    y = torch.multinomial(probs, 1, generator=g).squeeze(1)
    f = torch.arange(32).float()[None, :, None]
    t = torch.arange(32).float()[None, None, :]
    base_f = (4 + (y % 8) * 3.3).float()[:, None, None]
    sweep = ((y // 8) - 1).float()[:, None, None] * 0.25     # down-, flat or up-sweep
    onset = torch.randint(0, 16, (n, 1, 1), generator=g).float()
    dur = 8 + (y % 5).float()[:, None, None]
    on = ((t >= onset) & (t < onset + dur)).float()
    call = on * torch.exp(-0.5 * ((f - base_f - sweep * (t - onset)) / 1.0) ** 2)
    noise = 0.4 * torch.rand(n, 32, 32, generator=g)
    spec = torch.log(call * (0.5 + torch.rand(n, 1, 1, generator=g)) + noise + 0.05)
    spec = (spec - spec.mean()) / spec.std()
    return (spec[:, None], mask), y


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(16000 + seed)
    ch = [8, 12, 16][seed % 3]
    lr = [1e-3, 2e-3, 5e-4][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 120
    torch.manual_seed(seed)
    model = BirdCNN(ch)
    ranges = torch.rand(N_REGION, N_SP, generator=g) < 0.4
    ranges[torch.arange(N_SP) % N_REGION, torch.arange(N_SP)] = True   # every species somewhere
    (x, m), y = _recordings(g, bs * steps, ranges)
    batches = [((x[i * bs:(i + 1) * bs], m[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs])
               for i in range(steps)]
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
