"""Game AI: a Connect-Four policy network (small CNN over the 2 x 6 x 7 board planes ->
7 column logits) trained by behaviour cloning on self-play / expert moves, with an
entropy bonus to keep the policy from collapsing; illegal moves (full columns) are
masked by setting their logits to -inf before the softmax.  Adam.

Mechanism: the loss is CE(masked logits, expert move) - beta * H(pi), with the
entropy written as ``-(p * log_softmax(masked)).sum()``.  For a masked column
p = 0 and log p = -inf, so the term is 0 * (-inf) = NaN.  Opening positions have no
full column and the run is calm; the first batch that contains a mid-game position
with a full column (a seed-dependent step; the replay buffer fills with longer games
over time) makes the loss NaN.

ORIGIN: None -- the unsafe 0 * log 0 is in the loss (entropy term), not inside a
module; the masking itself is correct.

Fix: mask with a large finite negative number (-1e9, as the invalid-action-masking
implementations do), so p = 0 exactly but log p is finite and p * log p = 0; same
model, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Huang & Ontanon 2020 'A Closer Look at Invalid Action Masking in Policy Gradient "
          "Algorithms' (masking with -1e8, not -inf) and sb3-contrib MaskableCategorical; "
          "recurring 'entropy is NaN with -inf masked logits' issues in RL libraries.")

ROWS, COLS = 6, 7


class C4Policy(nn.Module):
    def __init__(self, ch, mask_value):
        super().__init__()
        self.conv1 = nn.Conv2d(2, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.head = nn.Linear(ch * ROWS * COLS, COLS)
        self.mask_value = mask_value

    def forward(self, board):
        h = F.relu(self.conv2(F.relu(self.conv1(board))))
        logits = self.head(h.flatten(1))
        full = (board[:, :, 0, :].sum(1) > 0)  # top cell occupied -> column full
        return logits.masked_fill(full, self.mask_value)


def bc_entropy_loss(logits, move, beta=0.01):
    logp = F.log_softmax(logits, dim=1)
    ce = F.nll_loss(logp, move)
    entropy = -(logp.exp() * logp).sum(1).mean()
    return ce - beta * entropy


def _positions(g, n, midgame_frac):
    boards = torch.zeros(n, 2, ROWS, COLS)
    moves = torch.zeros(n, dtype=torch.long)
    for i in range(n):
        heights = [0] * COLS
        mid = bool(torch.rand(1, generator=g) < midgame_frac)
        n_moves = int(torch.randint(14, 24, (1,), generator=g)) if mid else int(torch.randint(0, 8, (1,), generator=g))
        fav = int(torch.randint(0, COLS, (1,), generator=g))
        for m in range(n_moves):
            legal = [c for c in range(COLS) if heights[c] < ROWS]
            c = fav if (mid and heights[fav] < ROWS and torch.rand(1, generator=g) < 0.4) else \
                legal[int(torch.randint(0, len(legal), (1,), generator=g))]
            boards[i, m % 2, ROWS - 1 - heights[c], c] = 1.0
            heights[c] += 1
        legal = [c for c in range(COLS) if heights[c] < ROWS]
        # "expert": play the centre-most legal column that is lowest
        best = min(legal, key=lambda c: (abs(c - 3) + 0.5 * heights[c], c))
        moves[i] = best
    return boards, moves


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4 + seed)
    ch = [16, 24, 32][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    start_mid = [30, 55, 18][seed % 3]  # buffer starts holding long games
    steps = 100
    model = C4Policy(ch, mask_value=-1e9 if fixed else float("-inf"))
    batches = [_positions(g, bs, 0.0 if s < start_mid else 0.5) for s in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=bc_entropy_loss, batches=batches, steps=steps)
