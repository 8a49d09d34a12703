"""lr_too_high: Bahdanau (additive-attention) GRU encoder-decoder NMT, Adam given Adadelta's lr.

Mechanism: the original RNNsearch recipe (Bahdanau et al. 2015, also the old
dl4mt/nematus defaults) trains with Adadelta(lr=1.0, rho=0.95, eps=1e-6).  The user swaps the
optimizer to torch.optim.Adam but keeps lr=1.0 (lr 0.5-2.0 across seeds).  Adadelta's lr is
a unit-less multiplier on an already self-scaled step; Adam's lr is the step size itself, so
every weight moves by ~1.0 per step (update/weight ratio ~1e0 instead of ~1e-3).  The GRU
gates, the tanh attention energies and the output layer are thrown into saturation within a
few steps and the cross-entropy never recovers (it sits at or above its initial value).

ORIGIN is None: the too-large step hits every parameter group at once.
Fix: Adam with lr=1e-3 (the only change).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Bahdanau et al. 2015 RNNsearch (Adadelta, rho=0.95, eps=1e-6, lr=1.0 as in the "
          "dl4mt/nematus defaults); known pattern: optimizer switched to Adam with the lr kept")

PAD, BOS = 0, 1


class Encoder(nn.Module):
    def __init__(self, vocab, emb, hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.rnn = nn.GRU(emb, hid, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * hid, hid)

    def forward(self, src):
        out, h = self.rnn(self.embedding(src))
        return out, torch.tanh(self.bridge(torch.cat([h[0], h[1]], -1)))


class AdditiveAttention(nn.Module):
    def __init__(self, hid):
        super().__init__()
        self.W_s = nn.Linear(hid, hid, bias=False)
        self.W_h = nn.Linear(2 * hid, hid)
        self.v = nn.Linear(hid, 1, bias=False)

    def forward(self, s, keys, key_mask):
        e = self.v(torch.tanh(self.W_s(s).unsqueeze(1) + keys)).squeeze(-1)
        a = torch.softmax(e.masked_fill(~key_mask, float("-inf")), -1)
        return a


class Decoder(nn.Module):
    def __init__(self, vocab, emb, hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.attention = AdditiveAttention(hid)
        self.cell = nn.GRUCell(emb + 2 * hid, hid)
        self.out = nn.Linear(hid + 2 * hid + emb, vocab)

    def forward(self, tgt_in, enc_out, s, src_mask):
        keys = self.attention.W_h(enc_out)
        logits = []
        for t in range(tgt_in.size(1)):
            y = self.embedding(tgt_in[:, t])
            a = self.attention(s, keys, src_mask)
            ctx = (a.unsqueeze(-1) * enc_out).sum(1)
            s = self.cell(torch.cat([y, ctx], -1), s)
            logits.append(self.out(torch.cat([s, ctx, y], -1)))
        return torch.stack(logits, 1)


class RNNSearch(nn.Module):
    def __init__(self, sv, tv, emb, hid):
        super().__init__()
        self.encoder = Encoder(sv, emb, hid)
        self.decoder = Decoder(tv, emb, hid)

    def forward(self, src, tgt_in):
        enc_out, s = self.encoder(src)
        return self.decoder(tgt_in, enc_out, s, src != PAD)


def nmt_loss(logits, tgt):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1), ignore_index=PAD)


def _pairs(g, n, vocab, Lmin, Lmax):
    # toy "translation": reverse order and map each word through a fixed lexicon
    lex = torch.randperm(vocab - 2, generator=g) + 2
    src = torch.zeros(n, Lmax, dtype=torch.long)
    tgt = torch.zeros(n, Lmax + 1, dtype=torch.long)
    lens = torch.randint(Lmin, Lmax + 1, (n,), generator=g)
    for i in range(n):
        L = int(lens[i])
        w = torch.randint(2, vocab, (L,), generator=g)
        src[i, :L] = w
        tgt[i, :L] = lex[w.flip(0) - 2]
    return src, tgt


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(vocab=24, emb=32, hid=48, bs=32, steps=80, lr=1.0, L=(4, 8)),
           dict(vocab=20, emb=24, hid=64, bs=24, steps=90, lr=0.5, L=(3, 7)),
           dict(vocab=28, emb=32, hid=40, bs=40, steps=110, lr=2.0, L=(4, 9))][seed % 3]
    model = RNNSearch(cfg["vocab"], cfg["vocab"], cfg["emb"], cfg["hid"])
    lr = 1e-3 if fixed else cfg["lr"]      # Adadelta's lr=1.0 kept after switching to Adam
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    bs = cfg["bs"]
    src, tgt = _pairs(g, cfg["steps"] * bs, cfg["vocab"], *cfg["L"])
    batches = []
    for i in range(cfg["steps"]):
        s, t = src[i * bs:(i + 1) * bs], tgt[i * bs:(i + 1) * bs]
        t_in = torch.cat([torch.full((bs, 1), BOS, dtype=torch.long), t[:, :-1]], 1)
        batches.append(((s, t_in), t))
    return dict(model=model, optimizer=opt, loss_fn=nmt_loss, batches=batches, steps=cfg["steps"])
