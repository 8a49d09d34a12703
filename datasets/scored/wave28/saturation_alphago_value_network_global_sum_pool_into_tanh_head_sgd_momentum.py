"""AlphaGo/AlphaZero-style value network for MCTS leaf evaluation on a small Go-like board.

Data: random mid-game positions on an S x S board (S = 7-9) as 3 planes (own stones, opponent
stones, side-to-move); the label z in {-1, +1} is the game outcome, simulated from a smoothed
influence (territory) estimate plus noise.  Model: conv-BN-ReLU trunk, value head = 1x1 conv -> BN
-> ReLU -> global pooling over the board -> Linear -> ReLU -> Linear -> tanh (value in [-1, 1]);
loss = MSE(v, z) as in AlphaZero.

Mechanism: the value head pools the trunk's feature map with a global SUM over the S*S points (the
port replaced KataGo-style mean pooling by x.sum(dim=(2, 3))).  The pooled features are S^2 = 49-81
times larger than intended, so the output tanh's pre-activation is in the tens from step 0 (and
the first updates push it further): v sits at +-1 for every position, the tanh derivative is
~1e-9 or exactly 0 in float32, and no gradient reaches the head or the trunk.  The loss stays at
~2 (half the positions predicted with the wrong sign at full confidence) while the fixed run learns.

ORIGIN: "value_head.7", the output nn.Tanh that saturates (its input is driven by the summed pooled
features).

Fix: global MEAN pooling (smaller pre-activations); same model otherwise, same data and optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "value_head.7"
SOURCE = ("AlphaGo value network / AlphaZero value head with tanh output (Silver et al. 2016, 2017); "
          "KataGo's global pooling uses means scaled by board size (Wu 2019); tanh saturation from "
          "large pre-activations (Glorot & Bengio 2010; LeCun et al. 'Efficient BackProp')")


class Pool(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def forward(self, x):
        return x.sum(dim=(2, 3)) if self.mode == "sum" else x.mean(dim=(2, 3))


class ValueNet(nn.Module):
    def __init__(self, ch, blocks, hidden, pool):
        super().__init__()
        layers = [nn.Conv2d(3, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU()]
        for _ in range(blocks):
            layers += [nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU()]
        self.trunk = nn.Sequential(*layers)
        self.value_head = nn.Sequential(nn.Conv2d(ch, ch, 1, bias=False), nn.BatchNorm2d(ch),
                                        nn.ReLU(), Pool(pool),
                                        nn.Linear(ch, hidden), nn.ReLU(),
                                        nn.Linear(hidden, 1), nn.Tanh())

    def forward(self, planes):
        return self.value_head(self.trunk(planes)).squeeze(-1)


def _positions(n, S, g):
    u = torch.rand(n, S, S, generator=g)
    density = 0.25 + 0.3 * torch.rand(n, 1, 1, generator=g)
    own = (u < density / 2).float()
    opp = ((u >= density / 2) & (u < density)).float()
    side = torch.ones(n, S, S)
    planes = torch.stack([own, opp, side], 1)
    kernel = torch.ones(1, 1, 5, 5) / 25.0
    infl = F.conv2d((own - opp).unsqueeze(1), kernel, padding=2).squeeze(1)
    score = torch.tanh(3 * infl).sum(dim=(1, 2)) + 0.3 * torch.randn(n, generator=g)
    z = torch.where(score > 0, 1.0, -1.0)
    return planes, z


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    S = [7, 9, 8][seed % 3]
    ch = [32, 24, 48][seed % 3]
    blocks = [2, 3, 2][seed % 3]
    hidden = [64, 32, 48][seed % 3]
    batch = [32, 48, 64][seed % 3]
    lr = [0.02, 0.01, 0.015][seed % 3]
    steps = 200

    batches = [_positions(batch, S, g) for _ in range(steps)]
    torch.manual_seed(seed)
    model = ValueNet(ch, blocks, hidden, pool="mean" if fixed else "sum")
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    return {"model": model, "optimizer": opt, "loss_fn": lambda v, z: F.mse_loss(v, z),
            "batches": batches, "steps": steps}
