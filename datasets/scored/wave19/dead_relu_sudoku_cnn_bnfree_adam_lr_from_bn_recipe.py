"""Sudoku solver CNN (the widely copied "solve sudoku with a convolutional network" Keras
recipe, ported to PyTorch): one-hot 9x9 grid -> stack of 3x3 Conv2d+ReLU -> 1x1 conv to 9
digit logits per cell; cross-entropy over all 81 cells.

Mechanism: the recipe has a BatchNorm after every conv and trains with Adam lr 1e-2..5e-2,
which BN tolerates. The user removed BatchNorm ("small grid, not needed") but kept that lr.
Adam moves every weight by ~lr per step regardless of the gradient size. The second
conv (``body.0``) has fan-in 9*ch of non-negative ReLU inputs, so a uniform ~lr step on its
weights shifts its pre-activations by ~lr * sum|h| - an order of magnitude more than the
first conv, whose one-hot input has only 9 active entries. After the loss spike of the first
large step, the next updates drive ``body.0``'s pre-activations below zero everywhere: its
ReLU (``body.1``) is the first layer to go (almost) entirely dead, the layers above follow,
no gradient reaches conv1, and the loss sits at log(9) = 2.197 for the rest of the run.

ORIGIN: ``body.1`` - the ReLU after the second conv, the first to die completely.

Fix: Adam with lr = 1e-3, appropriate for the BN-free network (the only change).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "body.1"
SOURCE = ("Kaggle/Medium 'Solving Sudoku with a CNN' recipe (Conv+BN stack, Adam lr 1e-2) "
          "ported without BatchNorm; dead ReLU plateau")


class SudokuCNN(nn.Module):
    def __init__(self, ch, depth):
        super().__init__()
        self.conv1 = nn.Conv2d(10, ch, 3, padding=1)
        self.relu1 = nn.ReLU()
        body = []
        for _ in range(depth - 1):
            body += [nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()]
        self.body = nn.Sequential(*body)
        self.head = nn.Conv2d(ch, 9, 1)

    def forward(self, x):
        return self.head(self.body(self.relu1(self.conv1(x))))


def _puzzles(g, B, blanks):
    r = torch.arange(9)
    base = (3 * (r.view(9, 1) % 3) + r.view(9, 1) // 3 + r.view(1, 9)) % 9
    sols = []
    for _ in range(B):
        digits = torch.randperm(9, generator=g)
        bands = torch.randperm(3, generator=g)
        rows = torch.cat([bands[i] * 3 + torch.randperm(3, generator=g) for i in range(3)])
        stacks = torch.randperm(3, generator=g)
        cols = torch.cat([stacks[i] * 3 + torch.randperm(3, generator=g) for i in range(3)])
        s = digits[base[rows][:, cols]]
        if torch.rand(1, generator=g) < 0.5:
            s = s.T
        sols.append(s)
    sol = torch.stack(sols)                                  # B,9,9 in 0..8
    hide = torch.rand(B, 9, 9, generator=g).argsort(-1).argsort(-1)  # random ranks per row
    nblank = blanks // 9
    puzzle = torch.where(hide < nblank, torch.full_like(sol, -1), sol)
    x = torch.zeros(B, 10, 9, 9)
    x.scatter_(1, (puzzle + 1).unsqueeze(1), 1.0)            # channel 0 = blank
    return x, sol


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(ch=64, depth=4, B=32, blanks=36, lr=0.03, steps=80),
           dict(ch=48, depth=6, B=24, blanks=45, lr=0.04, steps=70),
           dict(ch=96, depth=3, B=16, blanks=27, lr=0.05, steps=90)][seed % 3]
    torch.manual_seed(seed)
    model = SudokuCNN(cfg["ch"], cfg["depth"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else cfg["lr"])
    g = torch.Generator().manual_seed(31 + seed)
    batches = [_puzzles(g, cfg["B"], cfg["blanks"]) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
