"""data_outlier: Listen-Attend-Spell (pyramidal BiLSTM listener + attention speller) with one
corrupt recording whose features are NaN.

Mechanism: the feature pipeline computes log-mel frames and applies per-utterance CMVN
((x - mean_t) / std_t).  One recording in the training set is a zero-filled file (a failed
download / truncated write): after the log floor every frame is the same constant, std_t is
exactly 0 and CMVN returns 0/0 = NaN for the whole utterance.  The batch that contains it
(a different step per seed) feeds NaN into the listener, the loss and every gradient are
NaN, Adam writes NaN into all weights, and every later step is NaN.  Before that step the
run is perfectly healthy.

ORIGIN is None: the problem is in one batch of data, not in a module.
Fix: drop the corrupt recording (replaced by a clean utterance so the batch keeps its
size) - the only change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Chan et al. 2016 'Listen, Attend and Spell'; known pattern: an empty / all-zero "
          "audio file in an ASR manifest giving NaN features after per-utterance CMVN")

PAD, SOS, EOS = 0, 1, 2


class PyramidalBLSTM(nn.Module):
    def __init__(self, d_in, hid):
        super().__init__()
        self.rnn = nn.LSTM(2 * d_in, hid, batch_first=True, bidirectional=True)

    def forward(self, x):
        B, T, D = x.shape
        x = x[:, : T - T % 2].reshape(B, T // 2, 2 * D)      # halve the frame rate
        return self.rnn(x)[0]


class Listener(nn.Module):
    def __init__(self, n_mels, hid):
        super().__init__()
        self.blstm = nn.LSTM(n_mels, hid, batch_first=True, bidirectional=True)
        self.pblstm1 = PyramidalBLSTM(2 * hid, hid)
        self.pblstm2 = PyramidalBLSTM(2 * hid, hid)

    def forward(self, feats):
        return self.pblstm2(self.pblstm1(self.blstm(feats)[0]))


class Speller(nn.Module):
    def __init__(self, vocab, hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hid)
        self.cell = nn.LSTMCell(hid + 2 * hid, 2 * hid)
        self.query = nn.Linear(2 * hid, 2 * hid)
        self.out = nn.Linear(4 * hid, vocab)

    def forward(self, listener_out, y_in):
        B = y_in.size(0)
        h = listener_out.new_zeros(B, self.cell.hidden_size)
        c = torch.zeros_like(h)
        ctx = listener_out.mean(1)
        logits = []
        for t in range(y_in.size(1)):
            h, c = self.cell(torch.cat([self.embedding(y_in[:, t]), ctx], -1), (h, c))
            att = torch.softmax((listener_out @ self.query(h).unsqueeze(-1)).squeeze(-1), -1)
            ctx = (att.unsqueeze(-1) * listener_out).sum(1)
            logits.append(self.out(torch.cat([h, ctx], -1)))
        return torch.stack(logits, 1)


class LAS(nn.Module):
    def __init__(self, n_mels, vocab, hid):
        super().__init__()
        self.listener = Listener(n_mels, hid)
        self.speller = Speller(vocab, hid)

    def forward(self, feats, y_in):
        return self.speller(self.listener(feats), y_in)


def las_loss(logits, y_out):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y_out.reshape(-1),
                           ignore_index=PAD, label_smoothing=0.1)


def _cmvn(x):
    # per-utterance mean/variance normalisation (no epsilon: the pipeline never expected std=0)
    return (x - x.mean(0, keepdim=True)) / x.std(0, keepdim=True)


def _utterance(g, templates, n_chars):
    L = int(torch.randint(3, 7, (1,), generator=g))
    chars = torch.randint(3, n_chars, (L,), generator=g)
    frames = []
    for ch in chars:
        k = int(torch.randint(3, 6, (1,), generator=g))
        frames.append(templates[ch].expand(k, -1) + 0.3 * torch.randn(k, templates.size(1), generator=g))
    return chars, torch.cat(frames)


def _batch(g, templates, n_chars, bs, corrupt_idx=None):
    utts = [_utterance(g, templates, n_chars) for _ in range(bs)]
    T = max(f.size(0) for _, f in utts)
    T += (-T) % 4
    U = max(len(c) for c, _ in utts) + 1
    feats = torch.zeros(bs, T, templates.size(1))
    y_in = torch.full((bs, U), PAD, dtype=torch.long)
    y_out = torch.full((bs, U), PAD, dtype=torch.long)
    for i, (chars, f) in enumerate(utts):
        logmel = f
        if i == corrupt_idx:                          # zero-filled recording: log floor everywhere
            logmel = torch.full_like(f, -23.0259)     # log(1e-10)
        feats[i, : f.size(0)] = _cmvn(logmel)
        y_in[i, : len(chars) + 1] = torch.cat([torch.tensor([SOS]), chars])
        y_out[i, : len(chars) + 1] = torch.cat([chars, torch.tensor([EOS])])
    return ((feats, y_in), y_out)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(n_chars=14, n_mels=20, hid=32, bs=16, steps=80, lr=2e-3, bad=37),
           dict(n_chars=18, n_mels=24, hid=40, bs=12, steps=90, lr=1.5e-3, bad=61),
           dict(n_chars=12, n_mels=16, hid=32, bs=20, steps=70, lr=2e-3, bad=22)][seed % 3]
    templates = torch.randn(cfg["n_chars"], cfg["n_mels"], generator=g) * 2.0
    model = LAS(cfg["n_mels"], cfg["n_chars"], cfg["hid"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for i in range(cfg["steps"]):
        corrupt = 3 if (i == cfg["bad"] and not fixed) else None
        batches.append(_batch(g, templates, cfg["n_chars"], cfg["bs"], corrupt))
    return dict(model=model, optimizer=opt, loss_fn=las_loss, batches=batches, steps=cfg["steps"])
