"""pytorch/examples word_language_model (--model LSTM, the default): RNNModel (embedding, 2-layer
LSTM, dropout 0.2, linear decoder, log-softmax), NLLLoss, truncated backpropagation through time
(bptt 35, batch 20, the hidden state carried over and detached), no optimizer: model.zero_grad(),
clip_grad_norm_(0.25), then p.data.add_(p.grad, alpha=-lr) with lr 20, divided by 4 after an
epoch whose validation loss did not improve. Changes: a synthetic corpus (a random Markov chain
over 200 words, 3 successors each; the default run is one epoch, so the lr is not annealed
in it, as in the example's first 100 steps) instead of Wikitext-2, and --emsize 128 --nhid 128
(the example's default 200; CPU time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ._data import markov_corpus

NAME = "word_lm_lstm"
EXPECT = "healthy"
STEPS = 100
EXAMPLE = "word_language_model/main.py (LSTM)"

NTOKENS, EMSIZE, NHID, NLAYERS, DROPOUT = 200, 128, 128, 2, 0.2
BATCH, EVAL_BATCH, BPTT, CLIP, LR = 20, 10, 35, 0.25, 20.0


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type: str, ntoken: int, ninp: int, nhid: int, nlayers: int,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self) -> None:
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input: torch.Tensor, hidden: Any) -> tuple[torch.Tensor, Any]:
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz: int) -> tuple[torch.Tensor, torch.Tensor]:
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data: torch.Tensor, bsz: int) -> torch.Tensor:
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source: torch.Tensor, i: int) -> tuple[torch.Tensor, torch.Tensor]:
    seq_len = min(BPTT, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


def repackage_hidden(h: Any) -> Any:
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def corpus() -> tuple[torch.Tensor, torch.Tensor]:
    """Train and validation streams of the same chain (STEPS bptt windows of batch 20 an
    epoch)."""
    n_train = BATCH * BPTT * STEPS + 1
    stream = markov_corpus(n_train + 2000, NTOKENS, seed=106)
    return batchify(stream[:n_train], BATCH), batchify(stream[n_train:], EVAL_BATCH)


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(1111)
    train_data, val_data = corpus()
    model = RNNModel("LSTM", NTOKENS, EMSIZE, NHID, NLAYERS, DROPOUT)
    criterion = nn.NLLLoss()
    lr, best_val_loss = LR, None
    losses: list[float] = []

    def evaluate(data_source: torch.Tensor) -> float:
        model.eval()
        total_loss = 0.0
        hidden = model.init_hidden(EVAL_BATCH)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, BPTT):
                data, targets = get_batch(data_source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    with dbg_factory(model) as dbg:
        while len(losses) < steps:  # epochs
            model.train()
            hidden = model.init_hidden(BATCH)
            for i in range(0, train_data.size(0) - 1, BPTT):
                data, targets = get_batch(train_data, i)
                model.zero_grad()
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
                loss = criterion(output, targets)
                loss.backward()
                dbg.record_loss(loss)
                torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
                losses.append(loss.item())
                if len(losses) == steps:
                    break
            val_loss = evaluate(val_data)
            if not best_val_loss or val_loss < best_val_loss:
                best_val_loss = val_loss
            else:
                lr /= 4.0
    return losses
