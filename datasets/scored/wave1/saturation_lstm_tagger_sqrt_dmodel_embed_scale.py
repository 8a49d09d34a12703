"""LSTM sequence classifier (token ids -> embedding -> 1-layer LSTM -> last hidden state -> linear;
the class is the intent token at the start, which must be carried through 9 filler tokens) whose
author copied the Transformer habit of multiplying the embedding by sqrt(d_model) (and, as in the
Transformer, also kept nn.Embedding's N(0, 1) init). In a Transformer that is harmless because the
result is added to positional encodings and layer-normalised; in an LSTM the scaled embedding
(per-entry std ~11) goes straight into the gate pre-activations W_ih x, which reach |z| ~ 5-15.
The input, forget and output sigmoids and the cell tanh sit on their plateaus, the cell candidate
is +-1 regardless of the token, and the gradient through sigmoid'/tanh' is ~0, so the LSTM cannot
learn to hold the first token and the loss stays near log(4) (Adam's normalised steps are far too
small to pull |z| back from ~13 within the run). Removing the sqrt(d_model) factor (smaller
pre-activations) is the only change in the fixed run.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "lstm"
SOURCE = ('Transformer embedding scaling `emb * sqrt(d_model)` (Vaswani et al. 2017; Annotated '
          'Transformer) reused in front of an LSTM; saturating LSTM gates (Hochreiter & Schmidhuber '
          '1997)')

V, D, H, L, K = 50, 128, 32, 10, 4


class LSTMClassifier(nn.Module):
    def __init__(self, emb_scale):
        super().__init__()
        self.emb_scale = emb_scale
        self.embed = nn.Embedding(V, D)
        self.lstm = nn.LSTM(D, H, batch_first=True)
        self.fc = nn.Linear(H, K)

    def forward(self, ids):
        e = self.embed(ids) * self.emb_scale
        out, (h, c) = self.lstm(e)
        return self.fc(h[-1])


def _make_batch(g, n):
    # class = the "intent" token at the start of the utterance; the rest is filler the LSTM must
    # carry that token across
    ids = torch.randint(K, V, (n, L), generator=g)
    y = torch.randint(0, K, (n,), generator=g)
    ids[:, 0] = y
    return ids, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = LSTMClassifier(emb_scale=1.0 if fixed else math.sqrt(D))
    batches = [_make_batch(g, 32) for _ in range(60)]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps = 200
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
