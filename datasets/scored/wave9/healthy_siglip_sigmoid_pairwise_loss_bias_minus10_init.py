"""Tiny SigLIP-style image-text model (Zhai et al. 2023): an image tower over patch features and a
text tower over token ids, L2-normalised embeddings, and the pairwise *sigmoid* loss
-1/|B| sum_ij log sigmoid(z_ij * (t * <x_i, y_j> + b)) with learnable log-temperature t' = log 10
and bias b = -10, exactly the paper's initialisation. It looks alarming: b = -10 is a huge
negative bias, the first loss is ~20 (every positive pair is scored as a near-certain negative),
the loss is a sum over all B^2 pairs divided by B rather than a mean, and the temperature and
bias move a lot during the first steps. This initialisation is deliberate (it matches the
heavy positive/negative imbalance) and the loss falls steadily. Nothing is wrong."""
import math
import torch, torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Zhai et al. 2023 'Sigmoid Loss for Language Image Pre-Training' (t' = log 10, b = -10 init); "
          "big_vision / open_clip SigLipLoss")

P, PD, V, T, D, B, NC = 9, 24, 60, 8, 32, 32, 16


class TinySigLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_proj = nn.Linear(PD, D)
        self.image_mlp = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, D), nn.GELU(), nn.Linear(D, D))
        self.tok = nn.Embedding(V, D)
        self.text_mlp = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, D), nn.GELU(), nn.Linear(D, D))
        self.t_prime = nn.Parameter(torch.tensor(math.log(10.0)))
        self.bias = nn.Parameter(torch.tensor(-10.0))

    def forward(self, patches, ids):
        img = self.image_mlp(self.patch_proj(patches).mean(1))
        txt = self.text_mlp(self.tok(ids).mean(1))
        img = nn.functional.normalize(img, dim=-1)
        txt = nn.functional.normalize(txt, dim=-1)
        return img @ txt.t() * self.t_prime.exp() + self.bias


def siglip_loss(logits, labels):
    return -nn.functional.logsigmoid(labels * logits).sum() / logits.shape[0]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 9)
    model = TinySigLIP()
    concept_patch = torch.randn(NC, PD, generator=g) * 2
    concept_words = torch.randint(1, V, (NC, 3), generator=g)
    n_batches = 25
    data = []
    for _ in range(n_batches):
        c = torch.randperm(NC, generator=g).repeat(2)[:B]
        patches = torch.randn(B, P, PD, generator=g)
        patches[:, :3] += concept_patch[c].unsqueeze(1)
        ids = torch.randint(1, V, (B, T), generator=g)
        ids[:, :3] = concept_words[c]
        labels = 2 * (c.unsqueeze(0) == c.unsqueeze(1)).float() - 1   # +1 for matching pairs
        data.append(((patches, ids), labels))
    steps = 150
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=siglip_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
