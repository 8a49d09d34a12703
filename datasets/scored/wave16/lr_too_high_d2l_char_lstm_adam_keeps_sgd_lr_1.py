"""d2l.ai character-level LSTM language model ("The Time Machine", one-hot inputs, nn.LSTM +
Linear head) switched from the book's SGD to Adam while keeping the book's ``lr=1``.

Mechanism
---------
d2l trains its RNN/GRU/LSTM language models with plain SGD at ``lr=1`` *and* gradient clipping
(theta=1).  The student replaced the updater by ``torch.optim.Adam(model.parameters(), lr=1)``
(and dropped the clipping, which Adam "does not need").  Adam's per-parameter step is ~lr
regardless of the gradient scale, so every weight of the LSTM and of the output layer moves by
~1 per step -- an update/weight ratio of order 1..10 instead of ~1e-3.  After a handful of steps
the gate pre-activations are in the tens, the logits in the hundreds, the loss jumps far above
ln(vocab) and then wanders at a high level (or goes non-finite) instead of learning the
character statistics.

ORIGIN
------
None -- the learning rate is a global hyper-parameter; all layers are overstepped together.

Fix
---
fixed=True uses Adam with a normal learning rate (5e-3 / 1e-2 / 4e-3); model, data, init and
optimizer class are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("d2l.ai 9.6/10.1 concise RNN/LSTM language model (SGD lr=1 with grad clipping) "
          "ported to torch.optim.Adam with lr=1; d2l forum 'loss explodes with Adam' threads")


class RNNModel(nn.Module):
    def __init__(self, vocab_size, num_hiddens, num_layers):
        super().__init__()
        self.rnn = nn.LSTM(vocab_size, num_hiddens, num_layers)
        self.vocab_size = vocab_size
        self.linear = nn.Linear(num_hiddens, vocab_size)

    def forward(self, inputs):                       # inputs: (batch, steps) token ids
        X = nn.functional.one_hot(inputs.T.long(), self.vocab_size).float()
        Y, _ = self.rnn(X)
        return self.linear(Y.reshape((-1, Y.shape[-1])))


def _time_machine_like(g, vocab, length):
    # a sparse Markov chain over characters: each char has 3 likely successors
    succ = torch.stack([torch.randperm(vocab, generator=g)[:3] for _ in range(vocab)])
    probs = torch.tensor([0.6, 0.3, 0.1])
    seq = torch.empty(length, dtype=torch.long)
    c = 0
    for i in range(length):
        c = int(succ[c, torch.multinomial(probs, 1, generator=g)])
        seq[i] = c
    return seq


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(35 + seed)
    vocab = 28
    num_hiddens, num_layers = [(64, 1), (96, 2), (48, 1)][seed % 3]
    bs, num_steps = [(32, 35), (24, 30), (40, 25)][seed % 3]
    lr = [5e-3, 1e-2, 4e-3][seed % 3] if fixed else 1.0
    steps = 80

    corpus = _time_machine_like(g, vocab, 20000)
    batches = []
    for _ in range(steps):                           # random sampling of subsequences
        starts = torch.randint(0, len(corpus) - num_steps - 1, (bs,), generator=g)
        X = torch.stack([corpus[s:s + num_steps] for s in starts])
        Y = torch.stack([corpus[s + 1:s + num_steps + 1] for s in starts])
        batches.append((X, Y.T.reshape(-1)))

    model = RNNModel(vocab, num_hiddens, num_layers)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
