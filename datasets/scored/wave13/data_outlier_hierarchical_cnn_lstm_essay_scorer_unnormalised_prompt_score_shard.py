"""data_outlier: hierarchical CNN-LSTM-attention automated essay scorer hit by a shard of
un-normalised scores.

Mechanism: Dong, Zhang & Yang (2017): words -> sentence-level Conv1d + attention pooling ->
sentence LSTM + attention pooling -> sigmoid score, trained with MSE on scores rescaled to
[0, 1] per prompt, optimiser RMSprop (as in the paper).  The per-prompt (min, max) table
misses one prompt (ASAP prompt 8, score range 0-60), so early in training a shard of essays
arrives with raw scores 10-60 instead of [0, 1].  The MSE of those batches is ~1e3 and their
gradients are ~100x-1000x the normal ones: the score unit is shoved into the top of its
sigmoid (every essay predicted ~0.95) and RMSprop's squared-gradient average absorbs the
burst (v grows by ~1e4-1e6; with alpha=0.99 it needs hundreds to thousands of steps to
forget), so for the rest of the run every update is tiny: the loss jumps up and stays
above its initial level while the healthy run keeps falling.

ORIGIN is None: the problem is in a few batches of data.
Fix: rescale the shard like the others (equivalently: drop it) - the only change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Dong, Zhang & Yang CoNLL 2017 'Attention-based Recurrent Convolutional Neural "
          "Network for Automatic Essay Scoring' (ASAP, RMSprop, MSE on per-prompt [0,1] "
          "scores); known pattern: ASAP prompt 8 (0-60 range) left out of the scaling table")


class AttnPool(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.v = nn.Linear(d, 1, bias=False)

    def forward(self, h):
        a = torch.softmax(self.v(torch.tanh(self.proj(h))).squeeze(-1), -1)
        return (a.unsqueeze(-1) * h).sum(-2)


class EssayScorer(nn.Module):
    def __init__(self, vocab, emb, conv, hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.word_conv = nn.Conv1d(emb, conv, kernel_size=5, padding=2)
        self.word_attn = AttnPool(conv)
        self.sent_lstm = nn.LSTM(conv, hid, batch_first=True)
        self.sent_attn = AttnPool(hid)
        self.score = nn.Linear(hid, 1)

    def forward(self, essays):
        B, S, W = essays.shape
        x = self.embedding(essays.view(B * S, W)).transpose(1, 2)
        x = torch.tanh(self.word_conv(x)).transpose(1, 2)
        sents = self.word_attn(x).view(B, S, -1)
        h, _ = self.sent_lstm(sents)
        return torch.sigmoid(self.score(self.sent_attn(h))).squeeze(-1)


def _essays(g, n, S, W, vocab):
    quality = torch.randn(vocab, generator=g)
    quality[0] = 0
    essays = torch.randint(1, vocab, (n, S, W), generator=g)
    # a latent writer skill biases which words are used
    skill = torch.randn(n, generator=g)
    good = torch.argsort(quality, descending=True)[: vocab // 4]
    bad = torch.argsort(quality)[: vocab // 4]
    pick = torch.rand(n, S, W, generator=g)
    p_good = torch.sigmoid(skill)[:, None, None] * 0.6
    p_bad = (1 - torch.sigmoid(skill))[:, None, None] * 0.6
    gi = good[torch.randint(0, len(good), (n, S, W), generator=g)]
    bi = bad[torch.randint(0, len(bad), (n, S, W), generator=g)]
    essays = torch.where(pick < p_good, gi, torch.where(pick > 1 - p_bad, bi, essays))
    raw = quality[essays].mean((1, 2))
    y = (raw - raw.min()) / (raw.max() - raw.min())          # normalised score in [0, 1]
    return essays, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(vocab=300, emb=32, conv=32, hid=32, S=6, W=10, bs=16, steps=120, lr=1e-3, bad=(4, 5)),
           dict(vocab=400, emb=48, conv=32, hid=48, S=5, W=12, bs=12, steps=110, lr=1.5e-3, bad=(5, 6, 7)),
           dict(vocab=250, emb=32, conv=48, hid=32, S=8, W=8, bs=20, steps=100, lr=1e-3, bad=(3, 4, 6))][seed % 3]
    model = EssayScorer(cfg["vocab"], cfg["emb"], cfg["conv"], cfg["hid"])
    opt = torch.optim.RMSprop(model.parameters(), lr=cfg["lr"], alpha=0.99)
    bs = cfg["bs"]
    essays, y = _essays(g, cfg["steps"] * bs, cfg["S"], cfg["W"], cfg["vocab"])
    batches = []
    for i in range(cfg["steps"]):
        yi = y[i * bs:(i + 1) * bs].clone()
        if i in cfg["bad"] and not fixed:
            yi = (yi * 50 + 10).round()          # prompt-8 shard left on its raw 0-60 scale
        batches.append((essays[i * bs:(i + 1) * bs], yi))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=cfg["steps"])
