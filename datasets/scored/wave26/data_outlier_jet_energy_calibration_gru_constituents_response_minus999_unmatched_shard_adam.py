"""GRU jet-energy-calibration regressor over pT-ordered jet constituents, trained with Adam,
where one early batch comes from a shard whose unmatched jets carry the -999.0 placeholder as
their response target.

Mechanism: the target is the jet response R = pT_gen / pT_reco (about 1.0 +- 0.1), standardised
with the mean/std of the matched jets, and the network reads each jet's constituents (log pT
fraction, d_eta, d_phi, charge, PF id) with a GRU and regresses R with an MSE.  The ntupler
fills the response branch with -999.0 when no generator jet is matched within dR < 0.2; every
production drops those jets except one, so one batch holds ~25% rows whose standardised
target is ~-1e4.  That single batch gives a loss ~1e7 and a gradient ~1e3-1e4 times the
normal one on every weight (it enters through the output error).  Adam's second-moment
estimate v, with beta2 = 0.999, keeps that g^2 for thousands of steps, so after the few steps
in which the momentum of the bad batch drains out, every update is ~1e-3 of its normal size:
the regressor stops improving and the loss stays at its early level for the rest of the run
(no inf/NaN anywhere).

ORIGIN: None: no module is faulty; the corruption is in the targets and reaches every layer at
once through the output error, so no single module is where it starts.

Fix: drop the unmatched jets (response == -999) from that shard, as the selection does for all
others.  Seeds change the hidden size, the head depth, the learning rate, the batch size and
which early batch holds the bad shard.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("CMS/ATLAS DNN jet energy regression (e.g. CMS b-jet energy regression, "
          "arXiv:1912.06046) with -999 ntuple defaults for unmatched gen jets; Adam's v "
          "remembers one huge-gradient batch for ~1/(1-beta2) steps (Kingma & Ba 2015; "
          "'loss spike then no learning' reports on the PyTorch forums).")

NC = 16


def _jets(n, g):
    mult = torch.randint(6, NC + 1, (n,), generator=g)
    w = torch.empty(n, NC).exponential_(1.0, generator=g)
    w = w * (torch.arange(NC).unsqueeze(0) < mult.unsqueeze(1)).float()
    w = torch.sort(w, 1, descending=True).values
    frac = w / w.sum(1, keepdim=True)
    neutral = (torch.rand(n, NC, generator=g) < 0.35).float() * (frac > 0).float()
    charge = torch.where(torch.rand(n, NC, generator=g) < 0.5, -1.0, 1.0) * (1 - neutral)
    charge = charge * (frac > 0).float()
    deta = 0.1 * torch.randn(n, NC, generator=g) * (frac > 0).float()
    dphi = 0.1 * torch.randn(n, NC, generator=g) * (frac > 0).float()
    # detector under-measures neutral hadrons: response grows with the neutral fraction
    nfrac = (frac * neutral).sum(1)
    resp = 0.95 + 0.35 * nfrac + 0.03 * torch.randn(n, generator=g)
    lf = torch.log(frac.clamp_min(1e-4)) * (frac > 0).float()
    x = torch.stack([lf / 4, deta * 5, dphi * 5, charge, neutral], -1)
    return x, resp


class GRUCalib(nn.Module):
    def __init__(self, hidden, head_depth):
        super().__init__()
        self.gru = nn.GRU(5, hidden, batch_first=True)
        layers, d = [], hidden
        for _ in range(head_depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
        layers += [nn.Linear(d, 1)]
        self.head = nn.Sequential(*layers)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1])


def build(seed: int, fixed: bool = False) -> dict:
    hidden = [48, 64, 32][seed % 3]
    head_depth = [1, 2, 1][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [64, 96, 80][seed % 3]
    bad_step = [2, 3, 1][seed % 3]
    steps = 120
    g = torch.Generator().manual_seed(5000 + seed)
    _, ref_r = _jets(4000, g)
    rmu, rsd = ref_r.mean(), ref_r.std()
    batches = []
    for s in range(steps):
        x, r = _jets(bs, g)
        if s == bad_step:
            unmatched = torch.rand(bs, generator=g) < 0.25
            r = r.clone()
            r[unmatched] = -999.0        # ntuple default for "no gen jet matched"
            if fixed:
                x, r = x[~unmatched], r[~unmatched]
        batches.append((x, ((r - rmu) / rsd).unsqueeze(1)))
    torch.manual_seed(seed)
    model = GRUCalib(hidden, head_depth)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
