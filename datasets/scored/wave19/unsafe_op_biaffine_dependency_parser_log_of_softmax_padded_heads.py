"""Biaffine dependency parser (Dozat & Manning, ICLR 2017): word + tag embeddings, BiLSTM,
separate ReLU MLPs for the dependent and head roles, biaffine arc scorer
s[i, j] = h_dep_i U h_head_j + h_head_j . u, head-selection cross-entropy (NLL of the gold
head of every real token). Adam with beta2 = 0.9 as in the paper.

Mechanism: the arc scorer masks padded head positions with -1e9 and then returns
``torch.log(torch.softmax(scores, -1))`` instead of ``log_softmax``. Batches come from a
length-bucketed loader, so the first batches contain sentences of a single length: no head is
masked, every probability is > 0 and training is calm. At the first batch that mixes lengths
(the remainder bucket), the masked heads get probability exactly 0 and log(0) = -inf. The NLL
only gathers gold heads, so the loss of that step is still finite, but the backward of log at
0 computes 0/0 = NaN, softmax's backward spreads it to every score, the Adam step writes NaN
into every weight, and from the next step on the loss is NaN. (With a fast learning rate the
same thing can happen slightly earlier inside a single-length bucket: once the scores get
confident, a clearly wrong head's probability underflows to exactly 0 in float32.)

ORIGIN: ``arc_attn`` - the biaffine scorer whose log(softmax) produces the first -inf / NaN.

Fix: return ``torch.log_softmax(scores, -1)`` (fused, finite for the masked entries); nothing
else changes.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "arc_attn"
SOURCE = ("Dozat & Manning 2017 biaffine parser re-implementations (e.g. yzhangcs/parser style) "
          "with log(softmax(masked scores)) instead of log_softmax; NaN at first padded batch")


class Biaffine(nn.Module):
    def __init__(self, d, fused):
        super().__init__()
        self.U = nn.Parameter(torch.zeros(d, d))      # zero init as in the paper
        self.u = nn.Linear(d, 1, bias=False)
        self.fused = fused

    def forward(self, dep, head, pad_mask):
        s = dep @ self.U @ head.transpose(1, 2) + self.u(head).transpose(1, 2)   # B, L(dep), L(head)
        s = s.masked_fill(pad_mask.unsqueeze(1), -1e9)
        if self.fused:
            return torch.log_softmax(s, -1)
        return torch.log(torch.softmax(s, -1))


class BiaffineParser(nn.Module):
    def __init__(self, vocab, ntags, emb, hid, mlp, fused):
        super().__init__()
        self.word = nn.Embedding(vocab, emb, padding_idx=0)
        self.tag = nn.Embedding(ntags, emb, padding_idx=0)
        self.lstm = nn.LSTM(2 * emb, hid, batch_first=True, bidirectional=True)
        self.mlp_dep = nn.Sequential(nn.Linear(2 * hid, mlp), nn.ReLU())
        self.mlp_head = nn.Sequential(nn.Linear(2 * hid, mlp), nn.ReLU())
        self.arc_attn = Biaffine(mlp, fused)

    def forward(self, words, tags):
        pad = words == 0
        h, _ = self.lstm(torch.cat([self.word(words), self.tag(tags)], -1))
        return self.arc_attn(self.mlp_dep(h), self.mlp_head(h), pad)


def _sentence(g, n, vocab):
    """Toy grammar: token rank = tag; head = nearest token with a higher rank (left first);
    the unique verb (top rank) attaches to ROOT at position 0."""
    tags = torch.randint(1, 5, (n,), generator=g)
    tags[int(torch.randint(0, n, (1,), generator=g))] = 5
    words = tags * 20 + torch.randint(0, 20, (n,), generator=g) + 1
    heads = torch.zeros(n, dtype=torch.long)
    for i in range(n):
        if tags[i] == 5:
            heads[i] = 0
            continue
        best = None
        for dist in range(1, n):
            for j in (i - dist, i + dist):
                if 0 <= j < n and tags[j] > tags[i]:
                    best = j
                    break
            if best is not None:
                break
        heads[i] = best + 1          # +1: position 0 is ROOT
    # prepend ROOT token
    return (torch.cat([torch.tensor([vocab - 1]), words]), torch.cat([torch.tensor([6]), tags]),
            torch.cat([torch.tensor([-100]), heads]))


def _batch(g, B, lengths, vocab):
    sents = [_sentence(g, n, vocab) for n in lengths]
    L = max(len(s[0]) for s in sents)
    W = torch.zeros(B, L, dtype=torch.long)
    T = torch.zeros(B, L, dtype=torch.long)
    H = torch.full((B, L), -100, dtype=torch.long)
    for b, (w, t, h) in enumerate(sents):
        W[b, :len(w)], T[b, :len(t)], H[b, :len(h)] = w, t, h
    return (W, T), H


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(emb=32, hid=48, mlp=64, B=16, lr=2e-3, steps=80, mixed_from=31),
           dict(emb=24, hid=64, mlp=96, B=12, lr=3e-3, steps=90, mixed_from=47),
           dict(emb=40, hid=40, mlp=48, B=20, lr=2e-3, steps=70, mixed_from=22)][seed % 3]
    torch.manual_seed(seed)
    vocab = 20 * 6 + 2
    model = BiaffineParser(vocab, 7, cfg["emb"], cfg["hid"], cfg["mlp"], fused=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], betas=(0.9, 0.9))
    g = torch.Generator().manual_seed(1717 + seed)
    batches = []
    for step in range(cfg["steps"]):
        if step < cfg["mixed_from"]:
            n = int(torch.randint(6, 15, (1,), generator=g))      # one length bucket per batch
            lengths = [n] * cfg["B"]
        else:
            lengths = torch.randint(5, 15, (cfg["B"],), generator=g).tolist()
        batches.append(_batch(g, cfg["B"], lengths, vocab))

    def loss_fn(log_probs, heads):
        return nn.functional.nll_loss(log_probs.reshape(-1, log_probs.shape[-1]), heads.reshape(-1),
                                      ignore_index=-100)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
