"""A character-level language model on a toy corpus of two-character reduplications ('lalala',
'kokoko'): the next character is the one seen two steps ago, so the model has to carry memory
through its recurrent state. The embedding table is 1024-wide (copied from a word-level config) but
the nn.RNN is tiny (8 units). nn.RNN initialises *all* its weights, including weight_ih, from
U(-1/sqrt(hidden), 1/sqrt(hidden)) - it ignores the input width - so with N(0,1) embeddings the
input pre-activation has std ~sqrt(1024/24) ~ 6.5 while the recurrent term stays below ~0.6. Most
tanh units in the RNN are pinned at +-1 by the current character alone: the state forgets the
previous character and the tanh derivative (mostly < 1e-3) blocks the gradient through time, so the
loss sits at ~log(vocab) (the fixed run drops it by ~60%). Fix: L2-normalise the embeddings before
the RNN (normalisation), which brings the pre-activations back into tanh's linear range.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "rnn"
SOURCE = ("PyTorch nn.RNN/GRU/LSTM reset_parameters uses U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for "
          "weight_ih regardless of input_size (pytorch/pytorch discussions on RNN init); wide embeddings into a "
          "narrow tanh RNN saturate it - the classic 'char-rnn always predicts the same distribution' report")

VOCAB = 28


class CharRNN(nn.Module):
    def __init__(self, vocab, emb_dim, hidden, normalise_emb):
        super().__init__()
        self.normalise_emb = normalise_emb
        self.embed = nn.Embedding(vocab, emb_dim)
        self.rnn = nn.RNN(emb_dim, hidden, batch_first=True)  # tanh
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x):
        e = self.embed(x)
        if self.normalise_emb:
            e = F.normalize(e, dim=-1)
        h, _ = self.rnn(e)
        return self.head(h)


def _batch(g, B, T):
    a = torch.randint(0, VOCAB, (B, 1), generator=g)
    b = (a + torch.randint(1, VOCAB, (B, 1), generator=g)) % VOCAB
    seq = torch.where(torch.arange(T + 1) % 2 == 0, a, b)
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps = 200
    model = CharRNN(VOCAB, 1024, 8, normalise_emb=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batches = [_batch(g, 32, 24) for _ in range(steps)]

    def loss_fn(out, y):
        return F.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
