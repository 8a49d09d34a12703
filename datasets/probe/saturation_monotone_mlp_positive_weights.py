"""Monotone tanh MLP (weights = softplus(raw) >= 0) for a bounded credit-risk target, MSE loss.
With default-initialised raw params every weight is ~0.7, so each unit sums its 128 inputs with the
same sign: pre-activations are common-mode and in the tens, the second tanh layer and the sigmoid
output saturate for every sample from step 0, gradients are ~0 and the loss stalls.
fixed=True: the non-negative weights are divided by fan-in, keeping pre-activations O(1).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "net.3"
SOURCE = ("Monotonic networks with non-negative (exp/softplus-reparametrised) weights and saturating "
          "activations (Sill 1998; Runje & Shankaranarayana, ICML 2023 'Constrained Monotonic Neural "
          "Networks', which notes such nets saturate); common tabular credit-risk pattern")


class MonotoneLinear(nn.Module):
    """Linear layer with non-negative weights, hence monotone increasing in every input."""

    def __init__(self, fan_in, fan_out, fan_in_norm):
        super().__init__()
        ref = nn.Linear(fan_in, fan_out)          # default PyTorch init for the raw params
        self.raw = nn.Parameter(ref.weight.detach().clone())
        self.bias = nn.Parameter(ref.bias.detach().clone())
        self.scale = 1.0 / fan_in if fan_in_norm else 1.0

    def forward(self, x):
        return F.linear(x, F.softplus(self.raw) * self.scale, self.bias)


class MonotoneMLP(nn.Module):
    def __init__(self, d, h, fan_in_norm):
        super().__init__()
        self.net = nn.Sequential(
            MonotoneLinear(d, h, fan_in_norm), nn.Tanh(),
            MonotoneLinear(h, h, fan_in_norm), nn.Tanh(),
            MonotoneLinear(h, 1, fan_in_norm), nn.Sigmoid(),
        )

    def forward(self, x):
        return self.net(x)


def _data(seed, steps, d=6, bs=128):
    g = torch.Generator().manual_seed(100 + seed)
    w = 0.4 + torch.rand(d, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d, generator=g)       # standardised features, oriented so risk increases
        f = (x * w).sum(1) / d ** 0.5 + 0.5 * torch.tanh(2 * x[:, 0]) - 0.3
        y = torch.sigmoid(1.5 * f) + 0.03 * torch.randn(bs, generator=g)
        batches.append((x, y.clamp(0, 1).unsqueeze(1)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    steps, d, h = 300, 6, 128
    norm = bool(fixed)
    model = MonotoneMLP(d, h, norm)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=_data(seed, steps, d),
                steps=steps, amp_dtype=None, scaler=None)
