"""d2l.ai GRU encoder-decoder ("Sequence-to-Sequence Learning", no attention) trained with d2l's
``MaskedSoftmaxCELoss`` and ``l.sum()`` -- the loss is summed over the batch, and batches come
from a length-bucketing sampler with varying batch sizes and sentence lengths.  Looks alarming,
trains fine.

Why it looks broken
-------------------
``MaskedSoftmaxCELoss`` returns one value per sentence (token losses times the valid-length mask,
averaged over the padded length) and d2l backpropagates ``l.sum()``.  The logged loss is therefore
a *sum over 24..48 sentences* (~20..110 at the start instead of ~2.5), and it jumps up and down
from batch to batch because the bucketing sampler alternates short and long buckets (different
padded lengths, different mask fractions) and different batch sizes.  Many target positions are
masked padding, whose logits receive exactly zero gradient.

Why it is healthy
-----------------
Adam is invariant to the loss scale, the masked positions are padding by design, and the
per-token cross-entropy falls from ln(vocab) to the entropy of the target language.  Despite the
batch-to-batch jumps, the summed loss ends far below its starting level.

ORIGIN is None (healthy run).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("d2l.ai 10.7 Seq2Seq (Seq2SeqEncoder/Decoder, MaskedSoftmaxCELoss, train_seq2seq with "
          "l.sum().backward()); bucketed batches of English-French pairs")


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, dtype=torch.float32)[None, :] < valid_len[:, None]
    X = X.clone()
    X[~mask] = value
    return X


class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    def forward(self, pred, label_and_len):
        label, valid_len = label_and_len
        weights = sequence_mask(torch.ones_like(label, dtype=torch.float32), valid_len)
        self.reduction = "none"
        unweighted = super().forward(pred.permute(0, 2, 1), label)
        per_sentence = (unweighted * weights).mean(dim=1)
        return per_sentence.sum()                     # d2l: l.sum().backward()


class Seq2SeqEncoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens, num_layers)

    def forward(self, X):
        return self.rnn(self.embedding(X.t()))


class Seq2SeqDecoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def forward(self, X, state):
        embs = self.embedding(X.t())
        context = state[-1].repeat(embs.shape[0], 1, 1)
        outputs, _ = self.rnn(torch.cat((embs, context), -1), state)
        return self.dense(outputs).swapaxes(0, 1)


class EncoderDecoder(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, enc_X, dec_X):
        _, state = self.encoder(enc_X)
        return self.decoder(dec_X, state)


def build(seed: int, fixed: bool = False) -> dict:
    # `fixed` is ignored: nothing is broken.
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1010 + seed)
    vocab = [16, 20, 12][seed % 3]
    embed, hidden, layers = [(32, 64, 2), (24, 48, 1), (32, 32, 2)][seed % 3]
    lr = [5e-3, 4e-3, 6e-3][seed % 3]
    buckets = [(4, 6), (7, 10), (11, 14)]                     # (min_len, max_len) per bucket
    steps = 120
    pad, bos, eos = 0, 1, 2

    succ = torch.stack([torch.randperm(vocab - 3, generator=g)[:2] + 3 for _ in range(vocab)])
    batches = []
    for t in range(steps):
        lo, hi = buckets[int(torch.randint(0, 3, (1,), generator=g))]
        bs = int(torch.randint(24, 49, (1,), generator=g))
        src_len = torch.randint(lo, hi + 1, (bs,), generator=g)
        tgt_valid = torch.randint(lo, hi + 1, (bs,), generator=g)
        src = torch.randint(3, vocab, (bs, hi), generator=g)
        src = sequence_mask(src, src_len, pad)
        tgt = torch.full((bs, hi + 1), pad)
        tok = src[:, 0]
        for j in range(hi):
            nxt = succ[tok, torch.randint(0, 2, (bs,), generator=g)]
            tgt[:, j] = torch.where(j < tgt_valid, nxt, torch.full_like(nxt, pad))
            tok = nxt
        tgt[torch.arange(bs), tgt_valid] = eos
        valid = tgt_valid + 1
        dec_in = torch.cat([torch.full((bs, 1), bos), tgt[:, :-1]], 1)
        batches.append(((src, dec_in), (tgt, valid)))

    model = EncoderDecoder(Seq2SeqEncoder(vocab, embed, hidden, layers),
                           Seq2SeqDecoder(vocab, embed, hidden, layers))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=MaskedSoftmaxCELoss(), batches=batches, steps=steps)
