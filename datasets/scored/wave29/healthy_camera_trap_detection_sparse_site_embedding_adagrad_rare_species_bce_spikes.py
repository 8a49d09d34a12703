"""Healthy: camera-trap detection / non-detection model for a rare carnivore with a sparse
per-station embedding (``nn.Embedding(sparse=True)``) and Adagrad, sigmoid + BCELoss.

What a naive monitor would flag:
* the station embedding receives sparse gradients: only the ~40 stations present in a batch
  get a gradient row, the other few hundred rows are exactly zero every step (and the grad is
  a sparse tensor);
* detections are rare (~10 % of camera-days), so most batches have a tiny loss and the
  batches that contain several detections -- or detections at stations never seen before --
  spike the loss several-fold, then it comes back down;
* Adagrad's effective step shrinks steadily, so late updates are small.
The model still learns station effects, habitat and seasonal activity and the loss falls well
below its starting value.

Mechanism: none -- logit P(detect on a camera-day) = station embedding . covariate projection +
MLP(habitat, days since deployment, season, moonlight, trail/off-trail).

ORIGIN: None (healthy).

Fix: nothing to fix; ``fixed`` has no effect.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Camera-trap occupancy / detection modelling (MacKenzie et al. occupancy models; "
          "Snapshot Serengeti / TEAM network station effects) with sparse embeddings and "
          "Adagrad (torch.optim.Adagrad supports sparse gradients, PyTorch docs).")


class DetectionNet(nn.Module):
    def __init__(self, n_sites, emb, fin, hidden):
        super().__init__()
        self.site = nn.Embedding(n_sites, emb, sparse=True)
        nn.init.normal_(self.site.weight, 0, 0.1)
        self.cov = nn.Sequential(nn.Linear(fin, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.out = nn.Linear(hidden + emb, 1)
        self.prob = nn.Sigmoid()

    def forward(self, site, cov):
        h = torch.cat([self.cov(cov), self.site(site)], dim=-1)
        return self.prob(self.out(h)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(231 + seed)
    torch.manual_seed(seed)
    n_sites = [400, 300, 500][seed % 3]
    emb = [8, 16, 12][seed % 3]
    hidden = [32, 64, 48][seed % 3]
    batch = [128, 96, 160][seed % 3]
    lr = [0.01, 0.015, 0.01][seed % 3]
    steps = 300

    n = steps * batch
    site_effect = 2.2 * torch.randn(n_sites, generator=g)
    site_forest = torch.rand(n_sites, generator=g)
    site = torch.randint(0, n_sites, (n,), generator=g)
    day = torch.randint(0, 90, (n,), generator=g).float()
    season = torch.rand(n, generator=g) * 2 * torch.pi
    moon = torch.rand(n, generator=g)
    on_trail = (torch.rand(n, generator=g) < 0.5).float()
    cov = torch.stack([site_forest[site], day / 45 - 1, torch.sin(season), torch.cos(season),
                       moon * 2 - 1, on_trail * 2 - 1], dim=1)
    logit = (-4.6 + site_effect[site] + 1.5 * site_forest[site] + 1.5 * on_trail
             - 1.0 * moon + 0.8 * torch.cos(season) - 0.004 * day)
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()

    model = DetectionNet(n_sites, emb, cov.shape[1], hidden)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    batches = [((site[i * batch:(i + 1) * batch], cov[i * batch:(i + 1) * batch]),
                y[i * batch:(i + 1) * batch]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.BCELoss(), "batches": batches, "steps": steps}
