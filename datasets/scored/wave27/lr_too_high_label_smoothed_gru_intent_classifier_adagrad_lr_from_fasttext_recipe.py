"""Utterance intent classifier: token embedding -> 1-2 layer GRU -> last hidden state ->
linear, trained with label-smoothed cross-entropy and Adagrad. The Adagrad learning rate
(0.7-1.0) is the one of the fastText-style bag-of-words baseline it replaced, where a
linear model with sparse updates tolerates it.

Mechanism: Adagrad's first updates have magnitude ~lr per parameter (g / sqrt(g^2)). With
lr ~1 every recurrent, embedding and output weight moves by O(1) on the first steps, i.e.
update/weight ratios of order 1-10 instead of ~1e-3. The GRU gates saturate in random
directions, the output layer weights jump back and forth, and the loss oscillates around (or
above) its initial value instead of decreasing; the accumulated squared gradients then freeze
the model wherever it landed. The same run at lr 0.05 learns the intents.

ORIGIN: None: an over-large learning rate acts on every parameter at once; no single module
is where it starts.

Fix: Adagrad lr 0.05; model, data, loss, steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Learning rates of fastText / linear bag-of-words models (lr 0.5-1.0) reused for RNN classifiers; "
          "Duchi et al. 2011 Adagrad; Szegedy et al. 2016 label smoothing; PyTorch forum threads 'GRU loss "
          "does not decrease with Adagrad lr=1'")

N_INTENTS = 8


class IntentGRU(nn.Module):
    def __init__(self, vocab, emb, hidden, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, N_INTENTS)

    def forward(self, tokens):
        h, _ = self.gru(self.emb(tokens))
        return self.out(h[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    layers = 1 + seed % 2
    hidden = [64, 96, 48][seed % 3]
    batch = [32, 48, 64][seed % 3]
    lr = 0.05 if fixed else [1.0, 0.7, 0.9][seed % 3]
    vocab, emb, T, steps = 200, 32, 12, 150

    torch.manual_seed(seed)
    model = IntentGRU(vocab, emb, hidden, layers)

    # each intent has a few keyword tokens placed somewhere in an otherwise random utterance
    keywords = torch.randint(0, vocab, (N_INTENTS, 3), generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_INTENTS, (batch,), generator=g)
        tok = torch.randint(0, vocab, (batch, T), generator=g)
        pos = torch.randint(0, T, (batch, 2), generator=g)
        kw = keywords[y][:, torch.randint(0, 3, (2,), generator=g)]
        tok.scatter_(1, pos, kw)
        batches.append((tok, y))

    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(label_smoothing=0.1),
            "batches": batches, "steps": steps}
