"""A mixture density network solves the inverse kinematics of a planar two-link arm: from the
end-effector position (x, y) it predicts a 2-D Gaussian mixture over the joint angles (q1, q2), whose
elbow-up / elbow-down branches make the inverse map two-valued. The model returns a dict
{logit_pi, mu, log_sigma} and the loss is the mixture negative log-likelihood. The optimiser is
AdamW at lr = 0.3, the value of the SGD config of the earlier deterministic IK regressor, kept when
the optimiser was switched. For Adam every weight moves by ~lr per step: the first update/weight
ratio is ~5, log_sigma of some components is thrown to -12 and others to +17 within two steps, the
NLL spikes to ~1e8, and the means and scales keep drifting outward (|log_sigma| ~ 40-50) until the
squared standardised residuals ((q - mu) / exp(log_sigma))^2 overflow float32 and the loss turns NaN
around step 20. The fix is the learning rate alone
(lr = 2e-3).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Bishop 1994 'Mixture Density Networks' (inverse kinematics example); widely reported MDN "
          "training instability / NaN NLL at high Adam learning rates (e.g. pytorch-mdn and "
          "sketch-rnn issue threads recommending lower lr).")

K = 4
L1, L2 = 1.0, 0.8


class IKMDN(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.pi_head = nn.Linear(64, K)
        self.mu_head = nn.Linear(64, K * 2)
        self.sigma_head = nn.Linear(64, K * 2)

    def forward(self, xy):
        h = self.trunk(xy)
        B = xy.shape[0]
        return {"logit_pi": self.pi_head(h),
                "mu": self.mu_head(h).view(B, K, 2),
                "log_sigma": self.sigma_head(h).view(B, K, 2)}


def _batch(g, B):
    q1 = (torch.rand(B, generator=g) * 2 - 1) * math.pi * 0.9
    q2 = (torch.rand(B, generator=g) * 2 - 1) * math.pi * 0.9
    x = L1 * torch.cos(q1) + L2 * torch.cos(q1 + q2)
    y = L1 * torch.sin(q1) + L2 * torch.sin(q1 + q2)
    xy = torch.stack([x, y], 1) + 0.01 * torch.randn(B, 2, generator=g)
    q = torch.stack([q1, q2], 1)
    return xy, q


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    model = IKMDN()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3 if fixed else 0.3, weight_decay=1e-4)
    steps = 200
    pool = [_batch(g, 128) for _ in range(50)]
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(out, q):
        log_pi = torch.log_softmax(out["logit_pi"], dim=-1)
        mu, ls = out["mu"], out["log_sigma"]
        z = (q.unsqueeze(1) - mu) / torch.exp(ls)
        comp = -0.5 * z.pow(2).sum(-1) - ls.sum(-1) - math.log(2 * math.pi)
        return -torch.logsumexp(log_pi + comp, dim=-1).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
