"""AlphaZero-style policy/value ResNet on Connect-Four positions (alpha-zero-general style):
conv stem + residual blocks with BatchNorm, a policy head (logits over the 7 columns) and a
tanh value head; loss = (z - v)^2 - pi . log p, SGD with momentum and weight decay.

Mechanism: the self-play buffer is written by a worker that stores z = float('nan') for games
that hit the move cap / were aborted ("no result yet") instead of dropping them or scoring
them as draws. The training data is clean until one sampled batch contains a few of these
positions. (z - v)^2 is NaN for those rows, the mean loss is NaN, backward fills every
gradient with NaN and the SGD step writes NaN into all weights; every later loss is NaN.

ORIGIN: None - the NaN comes from the data (one corrupt batch), not from a layer.

Fix: filter the positions with a non-finite value target out of the buffer (the corrupt rows
of that one batch are dropped; every other batch is unchanged).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("alpha-zero-general / AlphaZero self-play training loop; reports of NaN losses traced "
          "to unfinished games stored with a NaN/None outcome in the replay buffer")

ROWS, COLS = 6, 7


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(x + self.b2(self.c2(y)))


class PolicyValueNet(nn.Module):
    def __init__(self, c, blocks):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.tower = nn.Sequential(*[ResBlock(c) for _ in range(blocks)])
        self.policy_head = nn.Sequential(nn.Conv2d(c, 2, 1, bias=False), nn.BatchNorm2d(2), nn.ReLU(),
                                         nn.Flatten(), nn.Linear(2 * ROWS * COLS, COLS))
        self.value_head = nn.Sequential(nn.Conv2d(c, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU(),
                                        nn.Flatten(), nn.Linear(ROWS * COLS, 64), nn.ReLU(),
                                        nn.Linear(64, 1), nn.Tanh())

    def forward(self, x):
        h = self.tower(self.stem(x))
        return self.policy_head(h), self.value_head(h).squeeze(-1)


def _positions(g, B):
    boards = torch.zeros(B, ROWS, COLS)
    heights = torch.zeros(B, COLS, dtype=torch.long)
    nmoves = torch.randint(4, 22, (B,), generator=g)
    for b in range(B):
        player = 1.0
        for _ in range(int(nmoves[b])):
            legal = (heights[b] < ROWS).nonzero().flatten()
            c = int(legal[torch.randint(0, len(legal), (1,), generator=g)])
            boards[b, ROWS - 1 - heights[b, c], c] = player
            heights[b, c] += 1
            player = -player
        if player < 0:  # canonical form: side to move is +1
            boards[b] = -boards[b]
    x = torch.stack([(boards > 0).float(), (boards < 0).float(),
                     torch.ones(B, ROWS, COLS)], 1)
    legal = (heights < ROWS).float()
    centre = -torch.abs(torch.arange(COLS).float() - 3.0)
    # MCTS visit-count proxy: prefers central columns and columns the opponent is stacking
    opp_col = (boards < 0).float().sum(1)
    logits = 1.2 * centre + 0.8 * opp_col
    pi = torch.softmax(logits.masked_fill(legal == 0, -1e9), -1)
    own_c = (boards[:, :, 2:5] > 0).float().sum((1, 2))
    opp_c = (boards[:, :, 2:5] < 0).float().sum((1, 2))
    z = torch.sign(own_c - opp_c)
    return x, (pi, z)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(c=32, blocks=2, B=32, lr=0.02, steps=80, bad_step=23),
           dict(c=24, blocks=3, B=48, lr=0.01, steps=70, bad_step=41),
           dict(c=40, blocks=1, B=24, lr=0.03, steps=90, bad_step=57)][seed % 3]
    torch.manual_seed(seed)
    model = PolicyValueNet(cfg["c"], cfg["blocks"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
    g = torch.Generator().manual_seed(100 + seed)
    batches = [_positions(g, cfg["B"]) for _ in range(cfg["steps"])]
    x, (pi, z) = batches[cfg["bad_step"]]
    z = z.clone()
    z[torch.tensor([1, 5, 9])] = float("nan")  # games that hit the move cap, outcome unset
    if fixed:
        keep = ~torch.isnan(z)
        batches[cfg["bad_step"]] = (x[keep], (pi[keep], z[keep]))
    else:
        batches[cfg["bad_step"]] = (x, (pi, z))

    def loss_fn(out, target):
        logits, v = out
        pi_t, z_t = target
        value_loss = ((z_t - v) ** 2).mean()
        policy_loss = -(pi_t * F.log_softmax(logits, -1)).sum(-1).mean()
        return value_loss + policy_loss

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
