"""Semi-supervised foreground segmentation with direct entropy minimisation (ADVENT, Vu et al.
2019, binary variant): a small dilated conv segmenter is trained with BCE-with-logits on a
labelled batch and, on an unlabelled batch, with the mean of its binary self-information map H =
-(p log p + (1 - p) log(1 - p)), p = sigmoid(logit), computed by an EntropyMap module with
torch.log on the probabilities. Inputs are a tuple (labelled images, unlabelled images) and the
model returns a dict. Entropy minimisation rewards ever more confident predictions, so the
logits on easy unlabelled pixels keep growing; the run is calm until one of them passes ~16.6,
where sigmoid rounds to exactly 1.0 in fp32, log(1 - p) = log(0) = -inf and (1 - p) * -inf = 0 *
-inf = NaN. The loss turns NaN in the middle of an otherwise converging run.
Fixed: the map is computed in the fused, stable form from the logits (log p = logsigmoid(z),
log(1 - p) = logsigmoid(-z)); model, data and optimiser are unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "entropy_map"
SOURCE = ("ADVENT (Vu et al. CVPR 2019) entropy minimisation / self-information maps; "
          "'entropy loss becomes NaN' reports for code computing log(sigmoid) and log(1 - sigmoid) "
          "on probabilities instead of logsigmoid on logits")

RES = 16


class EntropyMap(nn.Module):
    def __init__(self, stable):
        super().__init__()
        self.stable = stable

    def forward(self, logit):
        p = torch.sigmoid(logit)
        if self.stable:
            logp, log1mp = F.logsigmoid(logit), F.logsigmoid(-logit)
        else:
            logp, log1mp = torch.log(p), torch.log(1 - p)
        return -(p * logp + (1 - p) * log1mp)


class Segmenter(nn.Module):
    def __init__(self, stable):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 16, 3, 1, 1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, 1, 2, dilation=2), nn.ReLU(),
            nn.Conv2d(16, 16, 3, 1, 1), nn.ReLU(),
            nn.Conv2d(16, 1, 1))
        self.entropy_map = EntropyMap(stable)

    def forward(self, x_lab, x_unlab):
        return {"sup": self.body(x_lab), "ent": self.entropy_map(self.body(x_unlab))}


def _make(g, n):
    yy, xx = torch.meshgrid(torch.arange(RES).float(), torch.arange(RES).float(), indexing="ij")
    lab = torch.zeros(n, 1, RES, RES)
    for _ in range(2):
        c = torch.rand(n, 2, generator=g) * RES
        r = 2 + 3 * torch.rand(n, generator=g)
        m = ((xx - c[:, 0, None, None]) ** 2 + (yy - c[:, 1, None, None]) ** 2) < r[:, None, None] ** 2
        lab[:, 0][m] = 1.0
    img = 1.5 * lab - 0.5 + 0.5 * torch.randn(n, 1, RES, RES, generator=g)
    return img, lab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(13000 + seed)
    xl, yl = _make(g, 64)          # small labelled set
    xu, _ = _make(g, 512)          # large unlabelled pool (labels discarded)
    steps, bs = 200, 8
    batches = []
    for s in range(steps):
        i, j = (s * bs) % 64, (s * bs) % 512
        batches.append(((xl[i:i + bs], xu[j:j + bs]), yl[i:i + bs]))
    model = Segmenter(stable=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def loss_fn(out, y):
        return F.binary_cross_entropy_with_logits(out["sup"], y) + 0.5 * out["ent"].mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
