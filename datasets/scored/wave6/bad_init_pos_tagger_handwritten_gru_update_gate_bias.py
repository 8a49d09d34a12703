"""Small POS-style tagger with a hand-written GRU cell (embedding -> GRUCell unrolled in Python ->
linear tag head). The tag of a word depends on the word's class and on the previous word's class.
Following the 'initialise the LSTM forget-gate bias high so it remembers' advice, and overdoing it,
the author sets the GRU update-gate bias to +6. In the GRU update h_t = z*h_{t-1} + (1-z)*n_t that
makes z = sigmoid(6) ~ 0.9975 at every step from the start: the state, initialised at zero, only
absorbs 0.25% of each candidate, so h_t ~ 0 for every token, the tag head sees almost nothing, and
the gradients to the candidate, gates and embeddings are all scaled by (1-z) or z(1-z) ~ 2.5e-3.
Under SGD + momentum the loss stays at log(#tags). Fix: a zero update-gate bias (z ~ 0.5 at the
start); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "cell.update_gate"
SOURCE = ("Jozefowicz et al. 2015 / 'forget gate bias = 1' advice misapplied to a GRU update gate with a "
          "large value; hand-written GRU cells in PyTorch tagging tutorials")

VOCAB, NTAG = 60, 4


class GRUCell(nn.Module):
    def __init__(self, inp, hid):
        super().__init__()
        self.update_gate = nn.Linear(inp + hid, hid)
        self.reset_gate = nn.Linear(inp + hid, hid)
        self.candidate = nn.Linear(inp + hid, hid)

    def forward(self, x, h):
        xh = torch.cat([x, h], dim=-1)
        z = torch.sigmoid(self.update_gate(xh))
        r = torch.sigmoid(self.reset_gate(xh))
        n = torch.tanh(self.candidate(torch.cat([x, r * h], dim=-1)))
        return z * h + (1 - z) * n


class Tagger(nn.Module):
    def __init__(self, update_bias):
        super().__init__()
        self.hidden = 32
        self.embed = nn.Embedding(VOCAB, 24)
        self.cell = GRUCell(24, self.hidden)
        self.tag_head = nn.Linear(self.hidden, NTAG)
        nn.init.constant_(self.cell.update_gate.bias, update_bias)

    def forward(self, ids):
        B, T = ids.shape
        e = self.embed(ids)
        h = e.new_zeros(B, self.hidden)
        outs = []
        for t in range(T):
            h = self.cell(e[:, t], h)
            outs.append(h)
        states = torch.stack(outs, dim=1)
        return {"tag_logits": self.tag_head(states), "states": states}


def _batch(g, word_class, B, T):
    ids = torch.randint(0, VOCAB, (B, T), generator=g)
    c = word_class[ids]
    prev = torch.cat([torch.zeros(B, 1, dtype=torch.long), c[:, :-1]], dim=1)
    return ids, (c + prev) % NTAG


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    word_class = torch.randint(0, NTAG, (VOCAB,), generator=g)
    steps = 300
    model = Tagger(update_bias=0.0 if fixed else 6.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    batches = [_batch(g, word_class, 32, 20) for _ in range(steps)]

    def loss_fn(out, y):
        return F.cross_entropy(out["tag_logits"].reshape(-1, NTAG), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
