"""A word-level LSTM language model is trained AWD-LSTM style with truncated BPTT: each batch
lane is one long token stream, every batch is the next 32-token window, and the hidden state is
carried (detached) from one batch to the next instead of being reset. The stream is a
concatenation of long documents from two genres with different word-transition statistics, and
every 40 steps all lanes cross a document boundary at the same time. At each crossing the
carried state still encodes the previous genre and the weights have drifted towards it (the
first time, the new genre has never been seen at all), so the loss jumps abruptly: the first
jump lands above the initial loss, later ones are smaller (roughly 2.3 -> 4.3, 2.3 -> 3.0,
1.7 -> 3.0, 1.7 -> 2.5) and each is recovered within 10-20 batches. The periodic jumps look
like instability or a corrupt data shard, but they are the normal signature of stateful TBPTT
over concatenated documents of different domains; the run converges. Nothing to fix.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Merity et al. 2017 AWD-LSTM / PyTorch word_language_model example: truncated BPTT "
          "with hidden state carried across batches (repackage_hidden); loss spikes at "
          "document boundaries")

V, E, Hd, T, B, DOC = 48, 32, 64, 32, 16, 40


class StatefulLSTMLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.lstm = nn.LSTM(E, Hd, batch_first=True)
        self.decoder = nn.Linear(Hd, V)
        self.state = None

    def forward(self, ids):
        out, state = self.lstm(self.embed(ids), self.state)
        self.state = tuple(s.detach() for s in state)       # repackage_hidden
        return self.decoder(out)


def _genre_table(g):
    # each word has 2 likely successors; the rest of the mass is spread thinly
    logits = torch.full((V, V), -2.0)
    succ = torch.stack([torch.randperm(V, generator=g) for _ in range(2)], 1)
    logits.scatter_(1, succ, 3.0)
    return torch.softmax(logits, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = StatefulLSTMLM()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps = 200
    tables = [_genre_table(g), _genre_table(g)]
    cur = torch.randint(0, V, (B,), generator=g)
    batches = []
    for s in range(steps):
        table = tables[(s // DOC) % 2]                      # genre of the current documents
        seq = torch.empty(B, T + 1, dtype=torch.long)
        seq[:, 0] = cur
        for t in range(T):
            seq[:, t + 1] = torch.multinomial(table[seq[:, t]], 1, generator=g).squeeze(1)
        cur = seq[:, -1]
        batches.append((seq[:, :-1], seq[:, 1:]))

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
