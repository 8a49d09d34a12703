"""1H-NMR mixture deconvolution: a Conv1d network reads a processed NMR spectrum (chemical-shift
axis, 512 points) of a mixture of reference metabolites and predicts their molar fractions
through log_softmax, trained with KLDivLoss(reduction="batchmean") against the true
compositions (Adam). The author used Adam(lr=0.1-0.2) "because the loss was flat at first".

Mechanism: Adam's normalised updates move every weight by ~lr per step regardless of the
gradient size; at 0.1-0.2 each step changes the conv filters and head by a large fraction of
their magnitude. The logits jump around, the ReLU feature maps are repeatedly knocked on and
off, and the optimiser bounces between poor points instead of descending: the KL stays at the
level of predicting average compositions (no NaN, the loss just does not improve) while the
same model at lr 1e-3 fits the mixtures.

ORIGIN: None - the step size is global, no single module starts it.
Fix: lr=1e-3 (same model, data, Adam and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Karpathy 'A Recipe for Training Neural Networks' (3e-4 is the safe Adam lr; "
          "loss not decreasing with lr too high); deep-learning NMR mixture quantification "
          "(e.g. Kern et al. 2019, Anal. Chem.)")

N_PTS, N_MET = 512, 6


def _reference_spectra(g):
    ppm = torch.linspace(0, 10, N_PTS)
    refs = []
    for _ in range(N_MET):
        n_pk = int(torch.randint(2, 5, (1,), generator=g))
        centres = 0.5 + 9.0 * torch.rand(n_pk, generator=g)
        heights = 0.3 + torch.rand(n_pk, generator=g)
        w = 0.02 + 0.02 * torch.rand(n_pk, generator=g)
        spec = (heights[:, None] / (1 + ((ppm - centres[:, None]) / w[:, None]) ** 2)).sum(0)
        refs.append(spec / spec.sum() * 60)
    return torch.stack(refs)


def _mixtures(g, bs, refs):
    e = -torch.log(torch.rand(bs, N_MET, generator=g))
    frac = e / e.sum(1, keepdim=True)
    shift = (torch.randint(-2, 3, (bs,), generator=g))
    x = frac @ refs
    x = torch.stack([torch.roll(x[i], int(shift[i])) for i in range(bs)])
    x = x + 0.02 * torch.randn(bs, N_PTS, generator=g)
    return x.unsqueeze(1), frac


class MixtureNet(nn.Module):
    def __init__(self, ch, depth):
        super().__init__()
        layers, c = [], 1
        for _ in range(depth):
            layers += [nn.Conv1d(c, ch, 7, padding=3), nn.ReLU(), nn.MaxPool1d(2)]
            c = ch
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c * (N_PTS >> depth), N_MET)

    def forward(self, x):
        return torch.log_softmax(self.head(self.features(x).flatten(1)), dim=1)


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(900 + seed)
    ch = [8, 12, 16][seed % 3]
    depth = [3, 4, 3][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = 1e-3 if fixed else [0.1, 0.15, 0.2][seed % 3]
    steps = 150
    refs = _reference_spectra(g)
    model = MixtureNet(ch, depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_mixtures(g, bs, refs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.KLDivLoss(reduction="batchmean"),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
