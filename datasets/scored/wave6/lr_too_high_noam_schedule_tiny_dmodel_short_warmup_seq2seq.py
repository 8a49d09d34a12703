"""Noam ('Attention is all you need') schedule copied onto a tiny seq2seq transformer.

The recipe lr = factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5) with
factor = 2 and Adam(0.9, 0.98, eps=1e-9) is tuned for d_model = 512 and warmup = 4000,
where it peaks near 5e-4.  Here the same LambdaLR (base lr 1.0, stepped inside the
optimizer's step) is attached to a d_model = 32 encoder-decoder and the warmup was shortened
to 10 steps to fit a 200-step run.  Both changes raise the peak: d_model**-0.5 goes from 0.044
to 0.18 and warmup**-0.5 from 0.016 to 0.32, so the peak learning rate is ~0.11, some 30x
higher than this model tolerates with Adam.  Within the warmup every Adam update moves each weight by
~0.1, the order of the weights themselves (update/weight ratio ~1e-1 instead of ~1e-3), the
network is knocked into predicting the token marginals and the reversal task (which needs
position-to-position cross-attention) is never learned: the loss drops to the unigram level
(~log 18) in the first steps and stays there (a stall, no NaN).
Fix: factor 0.06 (peak ~3e-3); the schedule shape, warmup and everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Vaswani et al. 2017 / 'The Annotated Transformer' NoamOpt (factor*d_model^-0.5*"
          "min(step^-0.5, step*warmup^-1.5)); known pitfall: the d_model^-0.5 factor and a short "
          "warmup make the peak lr explode for small models")

VOCAB, PAD, BOS = 20, 0, 1
L = 10


class Seq2Seq(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.src_emb = nn.Embedding(VOCAB, d)
        self.tgt_emb = nn.Embedding(VOCAB, d)
        self.pos = nn.Parameter(torch.randn(L + 1, d) * 0.1)
        self.core = nn.Transformer(d, 4, num_encoder_layers=2, num_decoder_layers=2,
                                   dim_feedforward=64, dropout=0.0, batch_first=True)
        self.generator = nn.Linear(d, VOCAB)
        mask = torch.triu(torch.full((L, L), float("-inf")), diagonal=1)
        self.register_buffer("causal", mask)

    def forward(self, src, tgt_in):
        s = self.src_emb(src) + self.pos[: src.shape[1]]
        t = self.tgt_emb(tgt_in) + self.pos[: tgt_in.shape[1]]
        h = self.core(s, t, tgt_mask=self.causal[: t.shape[1], : t.shape[1]])
        return self.generator(h)


class ScheduledAdam(torch.optim.Adam):
    """Adam whose step() also advances its LambdaLR (scheduler stepped inside the optimizer)."""

    def attach(self, lr_lambda):
        self.sched = torch.optim.lr_scheduler.LambdaLR(self, lr_lambda)

    def step(self, closure=None):
        out = super().step(closure)
        self.sched.step()
        return out


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Seq2Seq()
    d_model, warmup = 32, 10
    factor = 0.06 if fixed else 2.0

    def noam(step):
        step = step + 1
        return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)

    opt = ScheduledAdam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    opt.attach(noam)
    steps, bs = 200, 32
    batches = []
    for _ in range(steps):
        src = torch.randint(2, VOCAB, (bs, L), generator=g)
        tgt = src.flip(1)
        tgt_in = torch.cat([torch.full((bs, 1), BOS), tgt[:, :-1]], 1)
        batches.append(((src, tgt_in), tgt))

    def loss_fn(logits, tgt):
        return F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
