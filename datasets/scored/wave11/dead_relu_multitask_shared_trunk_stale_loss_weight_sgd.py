"""Multi-task tabular model: a shared 3-layer ReLU trunk feeds a churn head (BCE), a plan-tier head
(3-way CE) and a spend head (MSE), trained with SGD + momentum. The task weights were tuned when the
spend target was still in raw currency units and its loss was small next to the others (w_spend =
20); the target has since been standardised but the weight was never revisited. The spend term now
dominates the gradient with ~20x the intended step size. The overshooting updates keep pushing the
last trunk layer's pre-activations negative: its units die one after another (essentially all 32 are
dead for every input by the end of the run), the heads end up reading an almost constant feature
vector, and the total loss bounces around above its starting value without ever coming down. No inf
or NaN appears. With the weight set back to 1 for the standardised target the same trunk keeps its
units alive and all three tasks learn."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "trunk.4"
SOURCE = ("Multi-task loss weights tuned on raw-unit losses and left in place after target "
          "standardisation; dying ReLU after large early updates (Lu et al. 2019, 'Dying ReLU and "
          "initialization')")

NF = 20


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(NF, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                   nn.Linear(64, 32), nn.ReLU())
        self.churn = nn.Linear(32, 1)
        self.tier = nn.Linear(32, 3)
        self.spend = nn.Linear(32, 1)

    def forward(self, x):
        h = self.trunk(x)
        return {"churn": self.churn(h).squeeze(-1), "tier": self.tier(h), "spend": self.spend(h).squeeze(-1)}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(606 + seed)
    W = torch.randn(NF, 5, generator=g) / NF ** 0.5
    steps, B = 150, 64
    batches = []
    for _ in range(steps):
        x = torch.randn(B, NF, generator=g)
        z = torch.tanh(x @ W) * 2 + 0.3 * torch.randn(B, 5, generator=g)
        churn = (z[:, 0] + z[:, 1] * z[:, 2] > 0).float()
        tier = torch.bucketize(z[:, 3] - 0.5 * z[:, 1], torch.tensor([-0.7, 0.7]))
        spend = z[:, 4] * z[:, 3] + z[:, 2]
        spend = spend / 1.5                       # standardised
        batches.append((x, {"churn": churn, "tier": tier, "spend": spend}))
    model = MultiTaskNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # weight tuned when spend was in raw currency units; 1.0 is right for the standardised target
    w_churn, w_tier, w_spend = 1.0, 1.0, (1.0 if fixed else 20.0)

    def loss_fn(out, y):
        return (w_churn * F.binary_cross_entropy_with_logits(out["churn"], y["churn"])
                + w_tier * F.cross_entropy(out["tier"], y["tier"])
                + w_spend * F.mse_loss(out["spend"], y["spend"]))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
