"""Healthy control: a small nn.Transformer encoder-decoder (learned token + position embeddings) learns to
reverse digit sequences with teacher forcing (decoder input = BOS + target[:-1], causal mask), cross-entropy
loss, Adam(betas 0.9/0.98) with the usual linear warmup (60 steps) then inverse-square-root decay, driven by
a LambdaLR stepped from an optimizer step post-hook.  After a short plateau the loss drops from ~2.5 to
~0.01 with ordinary minibatch noise; no divergence, dead units or saturation.  fixed=True: the same run.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch 'Language Translation with nn.Transformer' tutorial / Annotated Transformer recipe "
          "(teacher forcing, causal target mask, Noam-style warmup) on the classic sequence-reversal toy task")

N_DIGITS, BOS, SEQ, D_MODEL = 10, 10, 8, 64
VOCAB = N_DIGITS + 1


class Seq2SeqTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(VOCAB, D_MODEL)
        self.tgt_emb = nn.Embedding(VOCAB, D_MODEL)
        self.src_pos = nn.Embedding(SEQ, D_MODEL)
        self.tgt_pos = nn.Embedding(SEQ, D_MODEL)
        self.register_buffer("positions", torch.arange(SEQ))
        self.transformer = nn.Transformer(d_model=D_MODEL, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=128, dropout=0.1, batch_first=True)
        self.generator = nn.Linear(D_MODEL, VOCAB)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(SEQ))

    def forward(self, src, tgt_in):
        s = self.src_emb(src) + self.src_pos(self.positions)
        t = self.tgt_emb(tgt_in) + self.tgt_pos(self.positions)
        h = self.transformer(s, t, tgt_mask=self.causal, tgt_is_causal=True)
        return self.generator(h)


def make_batches(gen, steps, bs):
    batches = []
    for _ in range(steps):
        src = torch.randint(0, N_DIGITS, (bs, SEQ), generator=gen)
        tgt = src.flip(1)
        tgt_in = torch.cat([torch.full((bs, 1), BOS), tgt[:, :-1]], 1)   # teacher forcing
        batches.append(((src, tgt_in), tgt))
    return batches


def loss_fn(logits, tgt):
    return F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    steps = 240
    batches = make_batches(torch.Generator().manual_seed(seed), steps, 32)
    model = Seq2SeqTransformer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    warmup = 60
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, math.sqrt(warmup / (s + 1))))
    opt.register_step_post_hook(lambda *_: sched.step())
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
