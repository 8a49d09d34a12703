"""Character-level language model with a ReLU recurrent layer (nn.RNN(nonlinearity='relu'),
the 'IRNN' of Le, Jaitly & Hinton 2015). The paper's whole point is the init: recurrent matrix =
identity, biases zero. Here the author wrote nn.init.normal_(rnn.weight_hh_l0, std=1.0) ("random
normal init like the rest of the model"). A 64x64 N(0,1) matrix has spectral radius ~8; through
the ReLU the hidden state still grows by ~5-6x per time step, so along a 64-character window the
activations grow geometrically until they overflow float32 and the very first forward pass
already returns inf logits and a NaN loss. Fixed: identity init of weight_hh_l0 (IRNN), nothing
else changed."""
import torch, torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "rnn"
SOURCE = ("Le, Jaitly & Hinton 2015 'A Simple Way to Initialize Recurrent Networks of Rectified "
          "Linear Units' (identity init); forum reports 'ReLU RNN loss is nan from the first batch'")

V, E, H, T, B = 40, 16, 64, 64, 16


class CharIRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.rnn = nn.RNN(E, H, nonlinearity="relu", batch_first=True)
        self.decoder = nn.Linear(H, V)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.decoder(h)


def _corpus(g, n_tokens):
    # order-1 Markov "text": each character has 3 likely successors
    succ = torch.randint(0, V, (V, 3), generator=g)
    seq = torch.empty(n_tokens, dtype=torch.long)
    c = 0
    for i in range(n_tokens):
        seq[i] = c
        if torch.rand(1, generator=g).item() < 0.9:
            c = succ[c, torch.randint(0, 3, (1,), generator=g)].item()
        else:
            c = torch.randint(0, V, (1,), generator=g).item()
    return seq


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 77)
    model = CharIRNN()
    nn.init.zeros_(model.rnn.bias_hh_l0)
    nn.init.zeros_(model.rnn.bias_ih_l0)
    if fixed:
        nn.init.eye_(model.rnn.weight_hh_l0)
    else:
        nn.init.normal_(model.rnn.weight_hh_l0, std=1.0)
    text = _corpus(g, 20000)
    steps = 120
    batches = []
    for _ in range(steps):
        starts = torch.randint(0, len(text) - T - 1, (B,), generator=g)
        chunk = torch.stack([text[s:s + T + 1] for s in starts.tolist()])
        batches.append((chunk[:, :-1], chunk[:, 1:]))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    def loss_fn(logits, y):
        return nn.functional.cross_entropy(logits.reshape(-1, V), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
