"""Pointer-generator summariser (See et al. 2017), tiny: GRU encoder over the article, GRU
decoder with teacher forcing and dot-product attention; the final distribution over the extended
vocabulary is p_gen * P_vocab (padded with zeros for the article OOVs) + (1 - p_gen) * copy
distribution scattered from the attention; loss = -log(final_dist[target]).mean(); Adam.

Mechanism: article-specific OOV words get extended ids V + k.  The reference summaries are
tokenised with the same extended vocabulary, but one batch contains a summary whose OOV word does
not occur in its article (an abstractive reference / a different tokenisation of a name).  Its
extended id gets probability exactly 0 in both terms (P_vocab is zero-padded there and no source
position copies it), so torch.log(0) = -inf and the step's loss is inf (the infinite gradient
lands on the constant zero padding, so the weights happen to survive; the reported loss does not).
The run is calm before and after that batch.
ORIGIN: None -- the log is taken in the top-level forward on the mixture of the generator
branch (out, p_gen) and the copy branch (attention), not inside one submodule.
Fix: epsilon inside the log, torch.log(final_dist + 1e-12) (as in the reference code's
masking of zero probabilities), nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("See, Liu & Manning 2017 'Get To The Point'; pointer-generator PyTorch ports with "
          "'loss becomes inf/nan' issues from log of zero final-distribution entries")


class PointerGenerator(nn.Module):
    def __init__(self, V, d, eps):
        super().__init__()
        self.V = V
        self.emb = nn.Embedding(V, d)
        self.enc = nn.GRU(d, d, batch_first=True)
        self.dec = nn.GRU(d, d, batch_first=True)
        self.out = nn.Linear(2 * d, V)
        self.p_gen = nn.Linear(2 * d, 1)
        self.eps = eps

    def forward(self, src_ext, dec_in, n_oov):
        unk = 1
        src = torch.where(src_ext >= self.V, torch.full_like(src_ext, unk), src_ext)
        dec_in = torch.where(dec_in >= self.V, torch.full_like(dec_in, unk), dec_in)
        enc_h, s = self.enc(self.emb(src))
        dec_h, _ = self.dec(self.emb(dec_in), s)
        attn = torch.softmax(dec_h @ enc_h.transpose(1, 2), -1)          # (B, Td, Ts)
        ctx = attn @ enc_h
        feat = torch.cat([dec_h, ctx], -1)
        p_vocab = torch.softmax(self.out(feat), -1)
        pg = torch.sigmoid(self.p_gen(feat))
        B, Td, _ = p_vocab.shape
        final = torch.cat([pg * p_vocab, p_vocab.new_zeros(B, Td, n_oov)], -1)
        idx = src_ext.unsqueeze(1).expand(-1, Td, -1)
        final = final.scatter_add(2, idx, (1 - pg) * attn)
        return torch.log(final + self.eps) if self.eps else torch.log(final)


def build(seed: int, fixed: bool = False) -> dict:
    d, bs, lr, bad_step = [(16, 8, 5e-3, 33), (24, 6, 4e-3, 47), (16, 10, 5e-3, 21)][seed % 3]
    V, Ts, Td, n_oov = 30, 12, 5, 3
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8000 + seed)
    model = PointerGenerator(V, d, 1e-12 if fixed else 0.0)
    steps = 60
    batches = []
    for t in range(steps):
        src = torch.randint(2, V + n_oov, (bs, Ts), generator=g)       # ids >= V are article OOVs
        # reference summary = the article's first Td content words (copy-heavy, like CNN/DM leads)
        tgt = src[:, :Td].clone()
        if t == bad_step:
            # an OOV in the summary that does not occur in the article
            row = 0
            absent = [k for k in range(V, V + n_oov) if not (src[row] == k).any()]
            if not absent:
                src[row][src[row] == V + n_oov - 1] = 2
                absent = [V + n_oov - 1]
                tgt[row] = src[row, :Td]
            tgt[row, Td - 1] = absent[0]
        dec_in = torch.cat([torch.zeros(bs, 1, dtype=torch.long), tgt[:, :-1]], 1)
        batches.append(((src, dec_in, n_oov), tgt))
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(logp, tgt):
        return -logp.gather(2, tgt.unsqueeze(-1)).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
