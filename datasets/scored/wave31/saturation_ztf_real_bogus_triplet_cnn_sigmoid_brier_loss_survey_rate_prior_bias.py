"""Real/bogus vetting of difference-image detections (ZTF braai-style): a small CNN on the
(science, reference, difference) cutout triplet with a sigmoid output unit, trained on balanced
batches with the Brier score (MSE on the sigmoid probability) and SGD + momentum.

Mechanism: following the focal-loss "prior" initialisation, the output bias is set to
log(pi / (1 - pi)) with pi the rate of real transients among all alerts in the survey stream
(~1e-3), i.e. about -7, so the classifier starts out confidently "bogus".  The training batches are
balanced, and the loss is the Brier score on the probability, whose gradient with respect to the
logit is 2 (p - y) p (1 - p): for the real half of the batch p ~ 1e-3, the sigmoid is saturated and
the gradient is ~2e-3 of its unsaturated size.  The network gets almost no signal from the
misclassified real detections, the output stays pinned near 0 and the loss sits at ~0.5 (the real
half of every batch counted as fully wrong) while the run with an unsaturated start learns.

ORIGIN: ``head.3``, the output Sigmoid: the unit that saturates and cuts the gradient to everything
before it.

Fix: start the output in its linear range (output bias 0, the default) so p ~ 0.5 at step 0;
same model, loss, optimiser, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "head.3"
SOURCE = ("Lin et al. 2017 prior-probability bias init (focal loss) applied with a survey-wide rate "
          "to balanced training and a sigmoid + MSE (Brier) loss; saturating sigmoid outputs with "
          "squared error (Glorot & Bengio 2010); ZTF real-bogus 'braai' (Duev et al. 2019)")

PI_SURVEY = 1e-3


def _triplet(g, real, n=21):
    yy, xx = torch.meshgrid(torch.arange(n).float() - n // 2, torch.arange(n).float() - n // 2,
                            indexing="ij")
    fwhm = 2.0 + 1.5 * torch.rand(1, generator=g).item()
    s = fwhm / 2.355
    psf = torch.exp(-(xx ** 2 + yy ** 2) / (2 * s * s))
    host = torch.rand(1, generator=g).item() * 3 * torch.exp(
        -((xx - 3) ** 2 + (yy + 2) ** 2) / 30.0)
    ref = host + 0.3 * torch.randn(n, n, generator=g)
    if real:      # new point source: PSF-shaped in the difference image
        amp = 1.5 + 4 * torch.rand(1, generator=g).item()
        sci = host + amp * psf + 0.3 * torch.randn(n, n, generator=g)
        diff = amp * psf + 0.4 * torch.randn(n, n, generator=g)
    else:         # bogus: dipole from misalignment, cosmic ray, or hot pixel
        kind = int(torch.randint(0, 3, (1,), generator=g))
        sci = host + 0.3 * torch.randn(n, n, generator=g)
        amp = 2 + 4 * torch.rand(1, generator=g).item()
        if kind == 0:
            dip = torch.exp(-((xx - 1) ** 2 + yy ** 2) / (2 * s * s)) - \
                torch.exp(-((xx + 1) ** 2 + yy ** 2) / (2 * s * s))
            diff = amp * dip
        elif kind == 1:
            diff = amp * (torch.exp(-(xx ** 2 + yy ** 2) / 0.3))
        else:
            diff = amp * ((xx.abs() < 0.5) & (yy.abs() < 6)).float()
        diff = diff + 0.4 * torch.randn(n, n, generator=g)
    return torch.stack([sci, ref, diff])


class RealBogusCNN(nn.Module):
    def __init__(self, ch, hidden):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, ch, 3), nn.ReLU(), nn.Conv2d(ch, ch, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch, 2 * ch, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(2 * ch, hidden), nn.ReLU(), nn.Linear(hidden, 1),
                                  nn.Sigmoid())

    def forward(self, x):
        return self.head(self.features(x)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [16, 24, 32][seed % 3]
    hidden = [64, 32, 48][seed % 3]
    lr = [0.12, 0.08, 0.06][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 150

    # balanced batches: half real, half bogus, shuffled within each batch
    y = torch.cat([(torch.randperm(bs, generator=g) < bs // 2).float() for _ in range(steps)])
    x = torch.stack([_triplet(g, bool(v)) for v in y])

    torch.manual_seed(seed)
    model = RealBogusCNN(ch, hidden)
    with torch.no_grad():
        model.head[2].bias.fill_(0.0 if fixed else math.log(PI_SURVEY / (1 - PI_SURVEY)))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()                                    # Brier score
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
