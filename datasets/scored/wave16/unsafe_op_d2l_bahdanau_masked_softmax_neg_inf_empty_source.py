"""d2l.ai Bahdanau-attention GRU encoder-decoder whose ``masked_softmax`` fills the padded
positions with ``float('-inf')`` instead of d2l's ``-1e6``; one batch contains a sentence pair
with an empty source side (valid length 0).

Mechanism
---------
d2l's ``masked_softmax`` calls ``sequence_mask(X, valid_lens, value=-1e6)``: a large but finite
fill.  The student "cleaned it up" to ``value=float('-inf')`` (the usual advice for masking).
Their own tokenizer does not append <eos> to the source, and the parallel corpus has a few lines
whose source side is empty (a stray tab / blank line in the .txt file), so such a pair has
``enc_valid_len == 0``.  For that row every attention score is -inf; ``softmax`` over a row of
-inf computes exp(-inf - (-inf)) = exp(nan): the attention weights, the context vector, the
decoder state, the logits and the loss are NaN, and the backward pass writes NaN into every
parameter.  The run is perfectly calm until that batch.

ORIGIN
------
"decoder.attention" -- the AdditiveAttention module whose masked softmax produces the first NaN
(0/0 over a fully masked row).

Fix
---
fixed=True uses d2l's finite fill value -1e6: a fully masked row gives uniform weights over
the padding instead of NaN.  Same data (including the empty-source pair), model and optimizer.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "decoder.attention"
SOURCE = ("d2l.ai 11.3/11.4 masked_softmax + Bahdanau attention (sequence_mask value=-1e6) "
          "changed to -inf; PyTorch forum 'softmax of all -inf gives NaN' threads")


def sequence_mask(X, valid_len, value):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, dtype=torch.float32)[None, :] < valid_len[:, None]
    X = X.clone()
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens, fill):
    shape = X.shape
    valid_lens = torch.repeat_interleave(valid_lens, shape[1]) if valid_lens.dim() == 1 else valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=fill)
    return nn.functional.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, fill):
        super().__init__()
        self.W_k = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.fill = fill

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens, self.fill)
        return torch.bmm(self.attention_weights, values)


class Seq2SeqEncoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens)

    def forward(self, X):
        outputs, state = self.rnn(self.embedding(X.t()))
        return outputs, state


class Seq2SeqAttentionDecoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, fill):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, fill)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def forward(self, X, enc_outputs, hidden_state, enc_valid_lens):
        enc_outputs = enc_outputs.permute(1, 0, 2)          # (batch, steps, hidden)
        X = self.embedding(X).permute(1, 0, 2)
        outputs = []
        for x in X:
            query = hidden_state[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
        return self.dense(torch.cat(outputs, dim=0)).permute(1, 0, 2)


class EncoderDecoder(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, enc_X, dec_X, enc_valid_lens):
        enc_outputs, state = self.encoder(enc_X)
        return self.decoder(dec_X, enc_outputs, state, enc_valid_lens)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(314 + seed)
    vocab = [20, 28, 16][seed % 3]
    embed, hidden = [(32, 32), (24, 48), (32, 64)][seed % 3]
    num_steps = [8, 10, 7][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = [5e-3, 4e-3, 5e-3][seed % 3]
    bad_step = [47, 66, 38][seed % 3]
    steps = 80
    pad, bos = 0, 1

    mapping = torch.randperm(vocab - 2, generator=g) + 2          # "word-by-word translation"
    batches = []
    for t in range(steps):
        valid = torch.randint(2, num_steps + 1, (bs,), generator=g)
        empty_row = int(torch.randint(0, bs, (1,), generator=g)) if t == bad_step else None
        if empty_row is not None:
            valid[empty_row] = 0                                     # empty source line
        src = torch.randint(2, vocab, (bs, num_steps), generator=g)
        src = torch.where(torch.arange(num_steps)[None, :] < valid[:, None], src, torch.full_like(src, pad))
        tgt = mapping[(src - 2).clamp(min=0)].flip(1)               # reversed, translated
        tgt = torch.where(src.flip(1) == pad, torch.full_like(tgt, pad), tgt)
        # right-align: move padding to the end of the target
        order = torch.argsort((tgt == pad).float(), dim=1, stable=True)
        tgt = torch.gather(tgt, 1, order)
        if empty_row is not None:                                    # ... but a non-empty target line
            tgt[empty_row, :3] = torch.randint(2, vocab, (3,), generator=g)
        dec_in = torch.cat([torch.full((bs, 1), bos), tgt[:, :-1]], 1)
        batches.append(((src, dec_in, valid), tgt))

    fill = -1e6 if fixed else float("-inf")
    model = EncoderDecoder(Seq2SeqEncoder(vocab, embed, hidden),
                           Seq2SeqAttentionDecoder(vocab, embed, hidden, fill))
    ce = nn.CrossEntropyLoss(ignore_index=pad)

    def loss_fn(y_hat, y):
        return ce(y_hat.reshape(-1, y_hat.shape[-1]), y.reshape(-1))

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
