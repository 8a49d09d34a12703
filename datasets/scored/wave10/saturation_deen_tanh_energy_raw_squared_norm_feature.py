"""Deep Energy Estimator Network (DEEN, Saremi et al. 2018): a tanh MLP energy E(y) on noisy
16-D patch vectors y = x + sigma*z, trained with the single-scale denoising score matching
objective || y - x + sigma^2 dE/dy ||^2, where the score is taken with autograd inside forward
(create_graph=True). To help the model with its radial tails, the practitioner appended the
squared norm ||y||^2 as an extra input feature, unscaled. With sigma = 2 that feature is ~80
for every sample and dominates the first layer's pre-activations, so every tanh in `energy.0`
is pinned at +-1; dE/dy (a product of tanh derivatives) is ~0 and so is its gradient with
respect to the weights. The loss sits at its starting value, ~E||sigma z||^2, with no NaN.
Fixed: the radial feature is fed as ||y||^2 / (d * (1 + sigma^2)) (unit scale), nothing else."""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "energy.0"
SOURCE = ("Saremi, Mehrjou, Schoelkopf & Hyvarinen 2018 'Deep Energy Estimator Networks'; "
          "radial / norm input features for energy models added without scaling")


class DEEN(nn.Module):
    def __init__(self, d=16, h=64, sigma=2.0, scale_radial=False):
        super().__init__()
        self.energy = nn.Sequential(nn.Linear(d + 1, h), nn.Tanh(),
                                    nn.Linear(h, h), nn.Tanh(),
                                    nn.Linear(h, 1))
        self.d, self.sigma, self.scale_radial = d, sigma, scale_radial

    def forward(self, y):
        with torch.enable_grad():
            y = y.detach().requires_grad_(True)
            r = (y ** 2).sum(1, keepdim=True)
            if self.scale_radial:
                r = r / (self.d * (1 + self.sigma ** 2))
            e = self.energy(torch.cat([y, r], 1)).sum()
            grad_e = torch.autograd.grad(e, y, create_graph=True)[0]
        return {"y": y, "grad_e": grad_e}


def make_loss(sigma):
    def deen_loss(out, x_clean):
        return ((x_clean - out["y"] + sigma ** 2 * out["grad_e"]) ** 2).sum(1).mean()
    return deen_loss


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(18000 + seed)
    d, sigma = 16, 2.0
    model = DEEN(d=d, sigma=sigma, scale_radial=fixed)
    # clean data: low-dimensional patches (4 latent factors) embedded in 16-D
    mix = torch.randn(4, d, generator=g) / 2
    steps, bs = 150, 128
    batches = []
    for s in range(steps):
        x = torch.tanh(torch.randn(bs, 4, generator=g) * 1.5) @ mix
        y = x + sigma * torch.randn(bs, d, generator=g)
        batches.append((y, x))
    opt = torch.optim.SGD(model.parameters(), lr=2e-3, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(sigma), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
