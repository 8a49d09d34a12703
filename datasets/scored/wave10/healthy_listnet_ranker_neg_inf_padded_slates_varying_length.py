"""Listwise learning-to-rank for a search feature store: each query comes with a slate of up to
20 candidate documents (query-document features), slates are padded to 20 and the padded slots
get a score of -inf before the softmax, exactly as ListNet/softmax-CE rankers are usually written.
The loss is the softmax cross-entropy between the label distribution (gains proportional to 4**relevance) and the score distribution,
summed over the real documents of each slate and averaged over queries. Things that look
alarming but are normal: -inf logits in every forward pass (masked out, never reach a finite
result), exact-zero gradients for the padded slots, and a loss whose floor changes from batch to
batch because slate lengths vary (a 3-document slate has a much lower attainable loss than a
20-document one). Training with AdamW is smooth and the loss drops well below its start.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Cao et al. 2007 ListNet; TF-Ranking / allRank softmax listwise loss with -inf masking of "
          "padded list items")

N_FEAT, MAX_LIST = 24, 20


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(N_FEAT, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, feats, valid):
        s = self.mlp(feats).squeeze(-1)
        return s.masked_fill(~valid, float("-inf")), valid


def loss_fn(out, rel):
    scores, valid = out
    logp = F.log_softmax(scores, dim=-1)                       # -inf on padded slots
    target = torch.where(valid, rel * math.log(2.0) * 2, torch.full_like(rel, -1e4)).softmax(-1)  # 4**rel gains
    per_doc = torch.where(valid, -target * logp, torch.zeros_like(logp))
    return per_doc.sum(-1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Scorer()
    w = torch.randn(N_FEAT, generator=g) / N_FEAT ** 0.5
    steps, n_q = 150, 32
    batches = []
    for _ in range(steps):
        feats = torch.randn(n_q, MAX_LIST, N_FEAT, generator=g)
        lengths = torch.randint(3, MAX_LIST + 1, (n_q,), generator=g)
        valid = torch.arange(MAX_LIST).unsqueeze(0) < lengths.unsqueeze(1)
        latent = feats @ w + 0.5 * torch.relu(feats[..., 0] * feats[..., 1])
        rel = torch.clamp(torch.round(1.5 * latent + 1.0 + 0.3 * torch.randn(n_q, MAX_LIST, generator=g)), 0, 4)
        rel = rel * valid
        batches.append(((feats, valid), rel))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
