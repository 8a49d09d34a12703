"""Image-text dual encoder moved from CLIP's softmax InfoNCE to a SigLIP-style
pairwise sigmoid loss (learnable bias initialised at -10, loss summed over
pairs / batch size), written as ``nn.BCELoss(torch.sigmoid(logits), eye)`` --
but keeping CLIP's logit scale of 100 (exp(4.6052), the value CLIP checkpoints
converge to) as the fixed multiplier instead of SigLIP's 10.

Mechanism: the B*(B-1) negative pairs dominate the first gradient, and with a
scale of 100 a single Adam step pushes the two towers' embeddings to opposite
sides of the sphere: every cosine, including the matching pairs', becomes
strongly negative and the positive-pair logits fall to 100 * (-0.5..-0.8) - 10.
There ``prob`` (the sigmoid) is saturated: p < 1e-12, BCELoss clamps
p * (1 - p) at 1e-12 in its backward and the sigmoid's derivative multiplies
by p * (1 - p) ~ 0, so the gradient norm collapses from ~1e3 to ~1e-10 within
3-4 steps.  The loss then sits at ~60-90 (the positives' -log p) forever.

ORIGIN: ``prob`` -- the nn.Sigmoid that saturates.

Fix: SigLIP's logit scale of 10, which keeps the logits inside the sigmoid's
responsive range; everything else (bias, BCELoss on probabilities) unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "prob"
SOURCE = ("SigLIP (Zhai et al., ICCV 2023) sigmoid loss vs CLIP (Radford et al., 2021) logit_scale; "
          "open_clip / forum reports of a sigmoid-loss port that 'does not train' when the CLIP "
          "temperature (100) is reused without the SigLIP bias and init")


class DualEncoder(nn.Module):
    def __init__(self, d_img, vocab, hidden, dim, scale):
        super().__init__()
        self.scale = scale
        self.image_tower = nn.Sequential(nn.Linear(d_img, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                         nn.ReLU(), nn.Linear(hidden, dim))
        self.word_emb = nn.EmbeddingBag(vocab, hidden, mode="mean")
        self.text_tower = nn.Sequential(nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, dim))
        self.bias = nn.Parameter(torch.tensor(-10.0))  # SigLIP bias init
        self.prob = nn.Sigmoid()

    def forward(self, img, tokens):
        u = F.normalize(self.image_tower(img), dim=-1)
        v = F.normalize(self.text_tower(self.word_emb(tokens)), dim=-1)
        return self.prob(self.scale * u @ v.t() + self.bias)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(d_img=64, hidden=96, dim=48, bs=32, lr=1e-3, concepts=24),
        dict(d_img=48, hidden=64, dim=32, bs=48, lr=2e-3, concepts=32),
        dict(d_img=96, hidden=128, dim=64, bs=40, lr=1e-3, concepts=20),
    ][seed % 3]
    g = torch.Generator().manual_seed(15000 + seed)
    steps, n_attr = 120, 3
    vocab = cfg["concepts"] + 20
    protos = torch.randn(cfg["concepts"], cfg["d_img"], generator=g)
    batches = []
    for _ in range(steps):
        # each image shows 3 concepts; its caption names them plus filler words
        cs = torch.stack([torch.randperm(cfg["concepts"], generator=g)[:n_attr] for _ in range(cfg["bs"])])
        img = F.relu(protos[cs].sum(1) / n_attr ** 0.5 + 0.3 * torch.randn(cfg["bs"], cfg["d_img"], generator=g) + 0.5)  # frozen-CNN style features
        filler = torch.randint(cfg["concepts"], vocab, (cfg["bs"], 4), generator=g)
        tokens = torch.cat([cs, filler], dim=1)
        batches.append(((img, tokens), torch.eye(cfg["bs"])))

    torch.manual_seed(seed)
    model = DualEncoder(cfg["d_img"], vocab, cfg["hidden"], cfg["dim"], scale=10.0 if fixed else 100.0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.05)
    bce = nn.BCELoss(reduction="sum")

    def loss_fn(p, y):  # SigLIP normalisation: sum over pairs / batch size
        return bce(p, y) / y.size(0)

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
