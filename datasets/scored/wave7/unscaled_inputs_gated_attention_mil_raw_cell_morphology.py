"""Gated-attention multiple-instance learning (Ilse, Tomczak & Welling 2018) regresses the "atypical
cell burden" of a tissue region (total area, in px^2, of its large and elongated cells) from a bag of
segmented cells, trained with SGD + momentum on the MSE. Each instance is described by raw
morphology read from the segmentation table - area in px^2 (~300-3000), perimeter in px, mean
16-bit intensity (~5000-60000), eccentricity in [0, 1] - and the target is the raw burden in px^2
(0 to ~12000). Nothing was standardised. The encoder's pre-activations are in the tens of thousands,
the initial squared error is ~1e7, and the gradient on the first layer is that error times
inputs of ~1e4: the very first SGD step moves the weights by orders of magnitude more than their
size, the next forward pass overflows (inf loss at the second step, NaN after). Standardising
every input column and the target (statistics from the data) gives a normal run with the same
optimiser."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "encoder.0"
SOURCE = ("Ilse et al. 2018 'Attention-based Deep Multiple Instance Learning' (gated attention); raw "
          "CellProfiler-style morphology tables fed without standardisation")

N_MAX, F_IN, H = 24, 4, 32


class GatedAttentionMIL(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(F_IN, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU())
        self.att_v = nn.Linear(H, 16)
        self.att_u = nn.Linear(H, 16)
        self.att_w = nn.Linear(16, 1)
        self.regressor = nn.Linear(H, 1)

    def forward(self, x, mask):
        h = self.encoder(x)                                            # (B, N, H)
        s = self.att_w(torch.tanh(self.att_v(h)) * torch.sigmoid(self.att_u(h))).squeeze(-1)
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), -1)
        z = (a.unsqueeze(-1) * h).sum(1)
        return {"burden": self.regressor(z).squeeze(-1), "attention": a}


def make_bags(g, n_bags):
    n = torch.randint(8, N_MAX + 1, (n_bags,), generator=g)
    mask = torch.arange(N_MAX).unsqueeze(0) < n.unsqueeze(1)
    area = 300 + 1500 * torch.rand(n_bags, N_MAX, generator=g)
    ecc = 0.5 * torch.rand(n_bags, N_MAX, generator=g)
    # positive bags get 2-4 atypical (large, elongated) cells, negatives at most one
    label = (torch.rand(n_bags, generator=g) < 0.5).long()
    k = torch.where(label == 1, torch.randint(2, 5, (n_bags,), generator=g),
                    torch.randint(0, 2, (n_bags,), generator=g))
    slot = torch.arange(N_MAX).unsqueeze(0) < k.unsqueeze(1)
    area = torch.where(slot, 2000 + 1000 * torch.rand(n_bags, N_MAX, generator=g), area)
    ecc = torch.where(slot, 0.65 + 0.3 * torch.rand(n_bags, N_MAX, generator=g), ecc)
    # decoys: large but round cells and elongated but small cells in every bag
    decoy = (torch.rand(n_bags, N_MAX, generator=g) < 0.2) & ~slot
    area = torch.where(decoy, 2000 + 1000 * torch.rand(n_bags, N_MAX, generator=g), area)
    decoy2 = (torch.rand(n_bags, N_MAX, generator=g) < 0.2) & ~slot & ~decoy
    ecc = torch.where(decoy2, 0.65 + 0.3 * torch.rand(n_bags, N_MAX, generator=g), ecc)
    perim = 3.6 * area.sqrt() * (1 + ecc) + 5 * torch.randn(n_bags, N_MAX, generator=g)
    inten = 5000 + 55000 * torch.rand(n_bags, N_MAX, generator=g)
    x = torch.stack([area, perim, inten, ecc], -1)
    burden = (area * slot.float()).sum(1)                  # total px^2 of atypical cells in the bag
    # shuffle the cells within the valid part of each bag (the k <= 4 atypical cells are always valid)
    keys = torch.rand(n_bags, N_MAX, generator=g).masked_fill(~mask, 2.0)
    perm = torch.argsort(keys, 1)
    x = x.gather(1, perm.unsqueeze(-1).expand(-1, -1, F_IN)) * mask.unsqueeze(-1)
    return x, mask, burden


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GatedAttentionMIL()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    steps, bs = 150, 16
    x, mask, burden = make_bags(g, steps * bs)
    if fixed:                                   # standardise every input column and the target
        valid = x[mask]
        x = ((x - valid.mean(0)) / valid.std(0)) * mask.unsqueeze(-1)
        burden = (burden - burden.mean()) / burden.std()
    batches = [((x[i * bs:(i + 1) * bs], mask[i * bs:(i + 1) * bs]), burden[i * bs:(i + 1) * bs])
               for i in range(steps)]
    loss_fn = lambda out, y: F.mse_loss(out["burden"], y)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
