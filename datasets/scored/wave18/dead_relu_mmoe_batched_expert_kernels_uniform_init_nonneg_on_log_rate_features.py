"""MMoE whose shared ReLU experts are dead from step 0: non-negative kernels on log-rate inputs.

Mechanism: Multi-gate Mixture-of-Experts (Ma et al. 2018) in the batched-kernel form of the
public Keras implementation: expert_kernels (d_in, units, n_experts) + expert_bias, one ReLU
(mmoe.expert_activation), a softmax gate per task and a linear tower per task (click and
conversion heads, BCE each).  The dense inputs are the usual CTR "statistical features":
log of smoothed historical rates (ad CTR, user CTR, site CVR, ...), all <= 0 (typically
-1 to -8).  Porting the Keras VarianceScaling initialiser, the user wrote
nn.init.uniform_(self.expert_kernels), whose default range is U(0, 1): every kernel entry is
non-negative, so every expert pre-activation is a positive combination of negative inputs,
far below zero for every sample.  The expert ReLU outputs exactly 0 everywhere from the
first forward pass, no gradient reaches the kernels, the towers see an all-zero mixture and
both heads can only learn their biases: the summed loss stays at the base-rate level.

ORIGIN is mmoe.expert_activation: the shared experts' ReLU is where every unit is dead; the
gates and towers only starve because of it.

Fix: a zero-mean initialiser (Xavier uniform, i.e. what VarianceScaling gives); nothing else
changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "mmoe.expert_activation"
SOURCE = ("MMoE (Ma et al., KDD 2018) as in the public Keras 'mmoe' layer (batched expert "
          "kernels, VarianceScaling init); nn.init.uniform_ called without bounds defaults "
          "to U(0, 1) (PyTorch docs), on log-rate CTR statistics features.")


class MMoE(nn.Module):
    def __init__(self, d_in, units, n_experts, n_tasks, nonneg_init):
        super().__init__()
        self.expert_kernels = nn.Parameter(torch.empty(d_in, units, n_experts))
        self.expert_bias = nn.Parameter(torch.zeros(units, n_experts))
        if nonneg_init:
            nn.init.uniform_(self.expert_kernels)                  # U(0, 1) by default
        else:
            nn.init.xavier_uniform_(self.expert_kernels.view(d_in, units * n_experts))
        self.expert_activation = nn.ReLU()
        self.gates = nn.ModuleList([nn.Linear(d_in, n_experts) for _ in range(n_tasks)])

    def forward(self, x):
        experts = torch.einsum("bd,dun->bun", x, self.expert_kernels) + self.expert_bias
        experts = self.expert_activation(experts)                 # (B, units, E)
        return [torch.einsum("bun,bn->bu", experts, F.softmax(gate(x), dim=-1))
                for gate in self.gates]


class MMoEModel(nn.Module):
    def __init__(self, d_in, units, n_experts, nonneg_init):
        super().__init__()
        self.mmoe = MMoE(d_in, units, n_experts, 2, nonneg_init)
        self.towers = nn.ModuleList([nn.Linear(units, 1) for _ in range(2)])

    def forward(self, x):
        return torch.cat([t(h) for t, h in zip(self.towers, self.mmoe(x))], dim=1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2600 + seed)
    d_in = [12, 16, 10][seed]
    units = [16, 32, 24][seed]
    n_experts = [4, 6, 3][seed]
    lr = [1e-3, 2e-3, 1e-3][seed]
    bs = [256, 192, 256][seed]
    steps = [150, 160, 140][seed]

    n = bs * steps
    base = torch.rand(d_in, generator=g) * 0.05 + 0.005               # typical rates
    rates = base * torch.exp(0.8 * torch.randn(n, d_in, generator=g))
    x = torch.log(rates.clamp(max=1.0))                              # log-rate features <= 0
    z = (x - x.mean(0)) / x.std(0)
    w1 = torch.randn(d_in, generator=g)
    w2 = 0.6 * w1 + 0.8 * torch.randn(d_in, generator=g)
    s1 = z @ w1 / d_in ** 0.5 + 0.5 * z[:, 0] * z[:, 1]
    s2 = z @ w2 / d_in ** 0.5 - 0.5 * torch.relu(z[:, 2])
    s1, s2 = s1 - s1.median(), s2 - s2.median()
    y = torch.stack([(torch.rand(n, generator=g) < torch.sigmoid(3 * s1)).float(),
                     (torch.rand(n, generator=g) < torch.sigmoid(3 * s2)).float()], 1)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]

    model = MMoEModel(d_in, units, n_experts, nonneg_init=not fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    bce = nn.BCEWithLogitsLoss()

    def loss_fn(logits, y):
        return bce(logits[:, 0], y[:, 0]) + bce(logits[:, 1], y[:, 1])

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
