"""Product categorisation from (image, title token ids, title padding mask): a small CNN image
tower and an embedding title tower, fused by concatenation.  The title tower pools token
embeddings with a hand-written masked mean, sum(h*mask)/mask.sum().  A few catalogue items have
an empty title (every position is padding), so the denominator is 0 and the pooled row is 0/0 =
NaN; the first batch containing such an item turns the loss NaN mid-run.
fixed=True: the masked mean divides by mask.sum().clamp_min(1) (empty title -> zero vector).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "title_pool"
SOURCE = ("Masked mean pooling sum(x*mask)/mask.sum(1) producing NaN for all-padding rows "
          "(sentence-transformers / HF forum reports; the usual fix is torch.clamp(mask.sum(1), min=1e-9)); "
          "multimodal product classification with image + title where some titles are empty")

N_CLASSES, VOCAB, MAXLEN, BATCH = 6, 300, 12, 32


class MaskedMeanPool(nn.Module):
    def __init__(self, safe=False):
        super().__init__()
        self.safe = safe

    def forward(self, h, mask):
        m = mask.unsqueeze(-1).to(h.dtype)
        summed = (h * m).sum(1)
        count = m.sum(1)
        if self.safe:
            count = count.clamp_min(1.0)
        return summed / count


class ImageTitleClassifier(nn.Module):
    def __init__(self, safe=False):
        super().__init__()
        self.image_tower = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(32, 48),
        )
        self.title_emb = nn.Embedding(VOCAB, 48, padding_idx=0)
        self.title_pool = MaskedMeanPool(safe)
        self.title_proj = nn.Linear(48, 48)
        self.fusion = nn.Sequential(nn.Linear(96, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, N_CLASSES))

    def forward(self, images, title_ids, title_mask):
        img = self.image_tower(images)
        txt = self.title_proj(self.title_pool(self.title_emb(title_ids), title_mask))
        logits = self.fusion(torch.cat([img, txt], dim=-1))
        return {"logits": logits, "image_emb": img, "title_emb": txt}


def _make_batches(g, steps, empty_steps):
    protos = torch.randn(N_CLASSES, 3, 1, 1, generator=g)
    class_words = torch.randint(1, VOCAB, (N_CLASSES, 25), generator=g)
    batches = []
    for s in range(steps):
        y = torch.randint(0, N_CLASSES, (BATCH,), generator=g)
        imgs = protos[y] * 0.4 + torch.randn(BATCH, 3, 16, 16, generator=g)
        lengths = torch.randint(2, MAXLEN + 1, (BATCH,), generator=g)
        if s in empty_steps:  # an item whose title field came through empty
            lengths[torch.randint(0, BATCH, (1,), generator=g)] = 0
        pos = torch.arange(MAXLEN).unsqueeze(0)
        mask = pos < lengths.unsqueeze(1)
        own = class_words[y][:, torch.randint(0, 25, (MAXLEN,), generator=g)]
        noise = torch.randint(1, VOCAB, (BATCH, MAXLEN), generator=g)
        use_own = torch.rand(BATCH, MAXLEN, generator=g) < 0.3
        ids = torch.where(use_own, own, noise)
        ids = torch.where(mask, ids, torch.zeros_like(ids))
        batches.append(((imgs, ids, mask), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    steps = 200
    first = int(torch.randint(50, 130, (1,), generator=g))
    empty_steps = {first, first + int(torch.randint(20, 60, (1,), generator=g))}
    batches = _make_batches(g, steps, empty_steps)
    torch.manual_seed(seed)
    model = ImageTitleClassifier(safe=fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)

    def loss_fn(out, y):
        return F.cross_entropy(out["logits"], y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
