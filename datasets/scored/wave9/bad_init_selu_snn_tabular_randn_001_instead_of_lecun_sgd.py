"""Self-normalising network (SNN, Klambauer et al. 2017) for a tabular credit-default task: eight
SELU layers of width 64 trained with plain SGD. SELU only self-normalises when the weights are
LeCun-normal (std = 1/sqrt(fan_in)); here the layers are initialised with the cs231n-style
"small random numbers" recipe `0.01 * randn`. Each layer multiplies the activation scale by roughly
0.01 * sqrt(64) * 1.4 ~ 0.1, so after eight layers the signal reaching the classifier is ~1e-8 of
the input and the backward signal to the early layers shrinks the same way. The logit is pinned to
the output bias, the BCE sits at the label entropy and SGD cannot move it: a silent stall with every
value finite. The fix re-initialises the same layers LeCun-normal (kaiming_normal_ with
nonlinearity='linear'), as the SNN paper prescribes."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = "Klambauer et al. 2017 'Self-Normalizing Neural Networks' (SELU requires lecun_normal init); cs231n notes on 'small random numbers' init failing for deep nets"

N_FEAT, WIDTH, DEPTH, STEPS, BATCH = 24, 64, 8, 150, 128


def _data(g, n):
    x = torch.randn(n, N_FEAT, generator=g)
    w = torch.randn(N_FEAT, generator=g) / math.sqrt(N_FEAT)
    logit = 2.0 * (x @ w) + 0.8 * torch.tanh(x[:, 0] * x[:, 1])
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    return x, y


class SNN(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    layers = []
    d = N_FEAT
    for _ in range(DEPTH):
        layers += [nn.Linear(d, WIDTH), nn.SELU()]
        d = WIDTH
    layers += [nn.Linear(d, 1)]
    model = SNN(layers)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="linear")  # LeCun normal
            else:
                with torch.no_grad():
                    m.weight.copy_(0.01 * torch.randn_like(m.weight))
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = _data(g, STEPS * BATCH)
    batches = [(x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]) for i in range(STEPS)]

    def loss_fn(out, target):
        return F.binary_cross_entropy_with_logits(out.squeeze(-1), target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
