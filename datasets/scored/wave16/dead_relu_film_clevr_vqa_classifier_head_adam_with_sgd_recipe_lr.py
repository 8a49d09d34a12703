"""FiLM visual reasoning model (Perez et al. 2018) on a CLEVR-like toy task.

A GRU encodes the question and a linear FiLM generator predicts (gamma, beta) for every residual
block of the visual pipeline: stem conv -> N FiLM ResBlocks (1x1 conv, ReLU, 3x3 conv, BN without
affine, FiLM, ReLU, residual) -> classifier (1x1 conv, BN, ReLU, global max-pool, FC, ReLU, FC).
The question names one of the colour channels; the answer is the quadrant of the object of that
colour.

Mechanism: the training script was switched from the SGD+momentum baseline to Adam (as in the
paper) but kept the SGD learning rate of 3e-2..5e-2, 30-50x a sane Adam rate.  The first Adam steps move every weight by ~lr regardless of gradient size; the hidden FC of the
classifier head receives a large negative push (its bias and the weights on the non-negative
max-pooled features), so all its units go negative for every input within a few steps.  Those
ReLUs are dead: zero output, zero gradient, and nothing can revive them, so the output layer only
sees a constant and the loss sits at log(#answers) for the rest of training.

ORIGIN: ``classifier.6`` -- the ReLU after the classifier's hidden FC, whose units all die.

Fix: an Adam learning rate of 2e-3; everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "classifier.6"
SOURCE = ("FiLM: Visual Reasoning with a General Conditioning Layer (Perez et al. 2018, Adam "
          "recipe, coordinate maps); dead-ReLU collapse reports after switching SGD->Adam "
          "without lowering the learning rate")


class FiLMBlock(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.conv1 = nn.Conv2d(w + 2, w, 1)          # + 2 coordinate maps, as in the paper
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(w, w, 3, padding=1)
        self.bn = nn.BatchNorm2d(w, affine=False)
        self.relu2 = nn.ReLU()

    def forward(self, x, coords, gamma, beta):
        h = self.relu1(self.conv1(torch.cat([x, coords], 1)))
        out = self.bn(self.conv2(h))
        out = gamma[:, :, None, None] * out + beta[:, :, None, None]
        return self.relu2(out) + h


class FiLMNet(nn.Module):
    def __init__(self, vocab, w, n_blocks, n_ans):
        super().__init__()
        self.w, self.n_blocks = w, n_blocks
        self.embed = nn.Embedding(vocab, 32)
        self.gru = nn.GRU(32, 64, batch_first=True)
        self.film_gen = nn.Linear(64, 2 * w * n_blocks)
        self.stem = nn.Sequential(nn.Conv2d(4 + 2, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU())
        self.blocks = nn.ModuleList([FiLMBlock(w) for _ in range(n_blocks)])
        self.classifier = nn.Sequential(
            nn.Conv2d(w, 64, 1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveMaxPool2d(1), nn.Flatten(),
            nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, n_ans))

    def forward(self, img, q):
        _, h = self.gru(self.embed(q))
        film = self.film_gen(h[-1]).view(-1, self.n_blocks, 2, self.w)
        B, _, H, W = img.shape
        ys = torch.linspace(-1, 1, H, device=img.device)[:, None].expand(H, W)
        xs = torch.linspace(-1, 1, W, device=img.device)[None, :].expand(H, W)
        coords = torch.stack([ys, xs])[None].expand(B, -1, -1, -1)
        x = self.stem(torch.cat([img, coords], 1))
        for i, blk in enumerate(self.blocks):
            x = blk(x, coords, film[:, i, 0], film[:, i, 1])
        return self.classifier(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=24, blocks=2, lr=3e-2, bs=32, steps=100),
           dict(w=32, blocks=3, lr=5e-2, bs=24, steps=110),
           dict(w=24, blocks=4, lr=4e-2, bs=40, steps=150)][seed % 3]
    lr = 2e-3 if fixed else cfg["lr"]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2024 + seed)
    vocab, q_len, n_col, S = 12, 6, 4, 8

    model = FiLMNet(vocab, cfg["w"], cfg["blocks"], 4)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()

    batches = []
    bs = cfg["bs"]
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    for _ in range(cfg["steps"]):
        img = 0.2 * torch.randn(bs, n_col, S, S, generator=g)
        pos = torch.randint(0, S, (bs, n_col, 2), generator=g).float()
        blob = torch.exp(-((yy - pos[..., 0, None, None]) ** 2 + (xx - pos[..., 1, None, None]) ** 2) / 2.0)
        img = img + blob
        col = torch.randint(0, n_col, (bs,), generator=g)
        q = torch.randint(n_col, vocab, (bs, q_len), generator=g)
        q[:, -1] = col                                   # "where is the <colour> thing?"
        p = pos[torch.arange(bs), col]
        ans = (p[:, 0] >= S / 2).long() * 2 + (p[:, 1] >= S / 2).long()
        batches.append(((img, q), ans))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
