"""TIRG composed image retrieval (Vo et al., CVPR 2019): "Text Image Residual Gating".

A query is a source image plus a modification text ("make it red", "make it a circle").  A conv
image encoder and an LSTM text encoder feed the TIRG composition
    f = w_g * sigmoid(MLP_g([x; t])) * x  +  w_r * MLP_r([x; t])
and the composed feature must retrieve the target image, encoded by the same image encoder.
Loss: TIRG's batch-based classification loss -- cross-entropy over in-batch targets of the
L2-normalised features times a learnable scale (init 4.0, as in the reference code).

Why it looks alarming but is healthy: the data loader does not drop the last incomplete batch,
so at the end of every epoch there is a small remainder batch (3..7 queries).  The in-batch
softmax then has only a handful of candidates, so its loss drops sharply (log of a much smaller
batch) and jumps back at the next full batch: a regular saw-tooth of deep dips on top of a
steady decline.  The dips are a property of the objective, not of training; nothing needs fixing.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Composing Text and Image for Image Retrieval - an Empirical Odyssey (Vo et al., CVPR "
          "2019), google/tirg batch-based classification loss with learnable normalisation scale; "
          "DataLoader(drop_last=False) remainder batches")


class TIRG(nn.Module):
    def __init__(self, vocab, d, width):
        super().__init__()
        self.img_enc = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, d))
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, d, batch_first=True)
        self.gate = nn.Sequential(nn.BatchNorm1d(2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.res = nn.Sequential(nn.BatchNorm1d(2 * d), nn.ReLU(), nn.Linear(2 * d, 2 * d),
                                 nn.ReLU(), nn.Linear(2 * d, d))
        self.a = nn.Parameter(torch.tensor([1.0, 10.0]))          # w_g, w_r as in the paper
        self.norm_scale = nn.Parameter(torch.tensor(4.0))

    def forward(self, src, text, tgt):
        x = self.img_enc(src)
        _, (h, _) = self.lstm(self.embed(text))
        t = h[-1]
        xt = torch.cat([x, t], 1)
        comp = self.a[0] * torch.sigmoid(self.gate(xt)) * x + self.a[1] * self.res(xt)
        q = F.normalize(comp, dim=-1)
        k = F.normalize(self.img_enc(tgt), dim=-1)
        return self.norm_scale * q @ k.t()


def batch_classification_loss(logits, target):
    return F.cross_entropy(logits, target)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=48, width=24, lr=1e-3, bs=32, per_epoch=9, rem=5, steps=120),
           dict(d=64, width=32, lr=7e-4, bs=24, per_epoch=11, rem=3, steps=130),
           dict(d=32, width=16, lr=2e-3, bs=40, per_epoch=7, rem=7, steps=110)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6060 + seed)
    n_col, n_shape, S = 6, 6, 8
    col_rgb = torch.randn(n_col, 3, 1, 1, generator=g)
    shape_tpl = (torch.randn(n_shape, 1, S, S, generator=g) > 0).float()
    vocab = 3 + n_col + n_shape                           # "make", "it", "a", colour, shape words

    def render(c, s):
        return col_rgb[c] * shape_tpl[s] + 0.2 * torch.randn(len(c), 3, S, S, generator=g)

    model = TIRG(vocab, cfg["d"], cfg["width"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    batches = []
    for step in range(cfg["steps"]):
        last_of_epoch = step % (cfg["per_epoch"] + 1) == cfg["per_epoch"]
        bs = cfg["rem"] if last_of_epoch else cfg["bs"]
        c = torch.randint(0, n_col, (bs,), generator=g)
        s = torch.randint(0, n_shape, (bs,), generator=g)
        change_col = torch.rand(bs, generator=g) < 0.5
        c2 = torch.where(change_col, (c + torch.randint(1, n_col, (bs,), generator=g)) % n_col, c)
        s2 = torch.where(change_col, s, (s + torch.randint(1, n_shape, (bs,), generator=g)) % n_shape)
        word = torch.where(change_col, 3 + c2, 3 + n_col + s2)
        text = torch.stack([torch.zeros_like(word), torch.ones_like(word),
                            torch.full_like(word, 2), word], 1)        # "make it a <word>"
        batches.append(((render(c, s), text, render(c2, s2)), torch.arange(bs)))
    return dict(model=model, optimizer=opt, loss_fn=batch_classification_loss, batches=batches,
                steps=cfg["steps"])
