"""pytorch/examples word_language_model (--model Transformer --use-optimizer --lr 0.001, the
README's AdamW command; its other one, --lr 5 without an optimizer, updates by hand as
word_lm_lstm does): TransformerModel, a subclass of nn.Transformer (its `decoder`, the 6-layer
Transformer decoder nn.Transformer builds, replaced by the linear output layer, as in the
example), 2 encoder layers, 2 heads, causal mask, NLLLoss, clip_grad_norm_(0.25), AdamW.
Changes: a synthetic corpus (a random Markov chain over 200 words, 3 successors each) and
--emsize 128 --nhid 128 (default 200; CPU time)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .word_lm_lstm import BPTT, CLIP, NTOKENS, corpus, get_batch

NAME = "word_lm_transformer"
EXPECT = "healthy"
STEPS = 100
EXAMPLE = "word_language_model/main.py (Transformer)"

EMSIZE, NHEAD, NHID, NLAYERS, DROPOUT, LR = 128, 2, 128, 2, 0.2, 0.001


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000) -> None:
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float()
                             * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    def __init__(self, ntoken: int, ninp: int, nhead: int, nhid: int, nlayers: int,
                 dropout: float = 0.5) -> None:
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                         num_encoder_layers=nlayers)
        self.model_type = "Transformer"
        self.src_mask: torch.Tensor | None = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz: int) -> torch.Tensor:  # type: ignore[override]
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self) -> None:
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src: torch.Tensor, has_mask: bool = True) -> torch.Tensor:  # type: ignore[override]
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = self._generate_square_subsequent_mask(len(src))
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(1111)
    train_data, val_data = corpus()
    with warnings.catch_warnings():  # nn.Transformer's note on enable_nested_tensor
        warnings.filterwarnings("ignore", message=".*enable_nested_tensor.*")
        model = TransformerModel(NTOKENS, EMSIZE, NHEAD, NHID, NLAYERS, DROPOUT)
    criterion = nn.NLLLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
    losses: list[float] = []

    def evaluate(data_source: torch.Tensor) -> float:
        model.eval()
        total_loss = 0.0
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, BPTT):
                data, targets = get_batch(data_source, i)
                output = model(data).view(-1, NTOKENS)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    with dbg_factory(model) as dbg:
        while len(losses) < steps:  # epochs
            model.train()
            for i in range(0, train_data.size(0) - 1, BPTT):
                data, targets = get_batch(train_data, i)
                optimizer.zero_grad()
                output = model(data)
                output = output.view(-1, NTOKENS)
                loss = criterion(output, targets)
                loss.backward()
                dbg.record_loss(loss)
                torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
                optimizer.step()
                losses.append(loss.item())
                if len(losses) == steps:
                    break
            evaluate(val_data)  # its lr annealing does not reach the AdamW optimizer
    return losses
