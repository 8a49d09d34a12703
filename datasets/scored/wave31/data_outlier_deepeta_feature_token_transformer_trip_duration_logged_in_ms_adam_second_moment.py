"""DeepETA-style feature-token transformer that predicts trip duration (standardised seconds).

Mechanism: one day's extract of the trip log (its position in the stream depends on the seed) came
from a new telemetry service that stores the actual trip duration in *milliseconds*. After the usual
standardisation with the reference-period mean/std (in seconds) the targets of that batch are
~1e3 instead of ~1, so its MSE is ~1e6 and its gradient ~1e3-1e4 times a normal one. The loss stays
finite, but Adam's second-moment estimate v absorbs that gradient: with beta2 = 0.999 it forgets it
over ~thousands of steps, so for the rest of the run every normal gradient is divided by a
sqrt(v) that is hundreds of times too large, after the first moment has already pushed the weights
for several steps towards the absurd targets. The loss jumps, then sits far above where it was:
the run stalls while the same run on the cleaned batch keeps improving.

ORIGIN: None -- the corrupt batch is a data problem that enters through the loss; every parameter's
Adam state is poisoned at once and no single module is where it starts.

Fix: the loader converts that batch's durations to seconds (the cleaning the rest already had);
model, optimiser, learning rate and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Uber engineering blog 'DeepETA: How Uber Predicts Arrival Times Using Deep Learning' "
          "(feature-token transformer); known pattern of a unit change (s vs ms) in one log source and "
          "of a single huge-gradient batch inflating Adam's second moment (Kingma & Ba 2015, beta2=0.999)")

N_BUCKETS = 32


class FeatureTokenETA(nn.Module):
    def __init__(self, n_cont, n_zone, d, layers, ff):
        super().__init__()
        self.cont_emb = nn.ModuleList([nn.Embedding(N_BUCKETS, d) for _ in range(n_cont)])
        self.zone_emb = nn.Embedding(n_zone, d)
        self.pos = nn.Parameter(torch.randn(n_cont + 2, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 4, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, cont_buckets, zones):
        toks = [emb(cont_buckets[:, i]) for i, emb in enumerate(self.cont_emb)]
        toks += [self.zone_emb(zones[:, 0]), self.zone_emb(zones[:, 1])]
        h = self.encoder(torch.stack(toks, 1) + self.pos)
        return self.head(h.mean(1)).squeeze(-1)


def _trips(g, bs, n_zone):
    dist_km = torch.rand(bs, generator=g) * 18 + 0.5
    hour = torch.randint(0, 24, (bs,), generator=g).float()
    dow = torch.randint(0, 7, (bs,), generator=g).float()
    traffic = torch.rand(bs, generator=g)
    zones = torch.randint(0, n_zone, (bs, 2), generator=g)
    rush = torch.exp(-((hour - 8) ** 2) / 4) + torch.exp(-((hour - 17.5) ** 2) / 4)
    speed = 38 - 14 * rush - 10 * traffic - 4 * (dow < 5).float() * rush
    router_eta = dist_km / speed * 3600                               # routing-engine estimate (s)
    zone_delay = ((zones[:, 1] * 7919) % 13).float() * 25             # pickup/drop-off friction
    actual = router_eta * (1 + 0.6 * traffic * rush) + zone_delay + 60 * torch.randn(bs, generator=g)
    feats = torch.stack([dist_km / 19, hour / 24, dow / 7, traffic, router_eta / 3600], 1)
    buckets = (feats.clamp(0, 0.999) * N_BUCKETS).long()               # quantile-style bucketing
    return buckets, zones, actual


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = [32, 48, 64][seed % 3]
    layers = [2, 1, 2][seed % 3]
    ff = [64, 96, 128][seed % 3]
    bs = [64, 48, 96][seed % 3]
    lr = [1e-3, 1.5e-3, 8e-4][seed % 3]
    bad_step = [9, 14, 6][seed % 3]
    steps = 160
    n_zone = 40
    MU, SD = 1500.0, 700.0            # reference-period statistics of trip duration in seconds
    torch.manual_seed(seed)
    model = FeatureTokenETA(5, n_zone, d, layers, ff)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = []
    for s in range(steps):
        buckets, zones, actual = _trips(g, bs, n_zone)
        if s == bad_step:
            actual = actual * 1000.0                  # new telemetry service: milliseconds
            if fixed:
                actual = actual / 1000.0              # cleaned: converted back to seconds
        batches.append(((buckets, zones), (actual - MU) / SD))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
