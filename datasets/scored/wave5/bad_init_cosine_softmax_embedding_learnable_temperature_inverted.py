"""Metric-learning classifier (normalised-softmax / NormFace-style head) that learns part embeddings
for retrieval over 200 catalogue classes.  Features and class weights are L2-normalised and the
logits are cos(theta) / tau with a *learnable* temperature tau.  The author copied CLIP's
"0.07 / 1/0.07" constant the wrong way round and initialised tau = 1/0.07 = 14.3 instead of 0.07,
so the logits start in [-0.07, 0.07]: the softmax is uniform whatever the embedding does, the
loss's lower bound at this temperature is ~97% of log(200), and Adam moves tau by only ~lr per step,
so it never gets near a useful value within the run -- a silent stall at the uniform-prediction
loss.  Initialising the same learnable temperature at 0.07 is the only change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "head"
SOURCE = ("Wang et al. 2017 'NormFace' (normalised softmax needs a large scale / small temperature, "
          "loss lower bound) and CLIP's learnable temperature initialised at 0.07 (stored as "
          "log(1/0.07)); pattern: temperature initialised inverted")

N_FEAT, EMB, N_CLS = 32, 32, 200


class CosineHead(nn.Module):
    def __init__(self, init_tau):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(N_CLS, EMB) * 0.1)
        self.tau = nn.Parameter(torch.tensor(float(init_tau)))

    def forward(self, z):
        return F.normalize(z, dim=-1) @ F.normalize(self.weight, dim=-1).T / self.tau


class EmbedNet(nn.Module):
    def __init__(self, init_tau):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(N_FEAT, 128), nn.ReLU(), nn.Linear(128, EMB))
        self.head = CosineHead(init_tau)

    def forward(self, x):
        return self.head(self.encoder(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(N_CLS, N_FEAT, generator=g)
    steps, bs = 150, 256
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLS, (bs,), generator=g)
        x = centers[y] + 0.5 * torch.randn(bs, N_FEAT, generator=g)
        batches.append((x, y))
    model = EmbedNet(init_tau=0.07 if fixed else 1.0 / 0.07)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
