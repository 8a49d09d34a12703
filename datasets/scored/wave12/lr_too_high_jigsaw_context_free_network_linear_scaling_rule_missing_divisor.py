"""Jigsaw-puzzle self-supervision (Noroozi & Favaro 2016, context-free network): a 12x12 image
is cut into a 2x2 grid of 6x6 tiles, the tiles are shuffled by one of 24 permutations, a
shared tile encoder embeds each tile, the four embeddings are concatenated in the shuffled
order and an MLP classifies which permutation was applied. Training uses SGD with Nesterov
momentum and the linear lr-scaling rule lr = base_lr * batch_size / 256; the config computes
base_lr * batch_size and forgets the / 256, so the run uses 256x the intended lr (0.2 * 64 =
12.8 instead of 0.05). Within five steps the updates overshoot and the loss jumps from ln 24 to
~1e11; the run then thrashes at a loss several times ln 24 with most ReLUs knocked out, until a
later overshoot sends the logits to inf and the cross-entropy to NaN (step ~60-110). With the
intended lr the puzzle is learned."""
import itertools
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Noroozi & Favaro, ECCV 2016 (jigsaw puzzles); Goyal et al. 2017 linear scaling rule "
          "lr = base_lr * batch/256, with the /256 dropped in a config")

PERMS = torch.tensor(list(itertools.permutations(range(4))))      # 24 permutations


class ContextFreeNet(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.tile_encoder = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 24, 3, padding=1, stride=2), nn.ReLU(),
            nn.Flatten(), nn.Linear(24 * 9, d), nn.ReLU(),
        )
        self.classifier = nn.Sequential(nn.Linear(4 * d, 64), nn.ReLU(), nn.Linear(64, len(PERMS)))

    def forward(self, tiles):                        # tiles: B, 4, 3, 6, 6
        b = tiles.shape[0]
        z = self.tile_encoder(tiles.flatten(0, 1)).view(b, -1)
        return self.classifier(z)


def _batch(g, n=64):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, 12), torch.linspace(0, 1, 12), indexing="ij")
    col = torch.rand(n, 3, 1, 1, generator=g)
    img = col * yy + (1 - col) * xx + 0.05 * torch.randn(n, 3, 12, 12, generator=g)
    tiles = torch.stack([img[:, :, :6, :6], img[:, :, :6, 6:], img[:, :, 6:, :6], img[:, :, 6:, 6:]], 1)
    label = torch.randint(0, len(PERMS), (n,), generator=g)
    shuffled = torch.stack([tiles[i, PERMS[label[i]]] for i in range(n)])
    return shuffled, label


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ContextFreeNet()
    base_lr, batch = 0.2, 64
    lr = base_lr * batch / 256 if fixed else base_lr * batch        # the missing / 256
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=5e-4)
    steps = 200
    batches = [_batch(g, batch) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
