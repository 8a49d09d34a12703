"""Learned memory prefetcher (Hashemi et al. 2018 'Learning Memory Access Patterns'): the last
T (PC, address-delta) pairs of a load stream are embedded, an LSTM reads them and a softmax over
the vocabulary of the most frequent deltas predicts the next delta (cross-entropy, plain SGD).

Mechanism: the training loop was copied from PyTorch's ``examples/word_language_model``,
whose default is ``--lr 20`` -- a value that only works there together with gradient
clipping at 0.25 and a tied, small-scale embedding; here the lr was kept and the clipping
was not.  An lr of 20-40 makes the update/weight ratio of the output projection and the
embeddings ~1e-1..1e0 per step: the logits overshoot from one step to the next, the
cross-entropy jumps well above its initial log(n_delta) and keeps bouncing there (the LSTM
gates saturate), so the run never learns the strided patterns the fixed run picks up.

ORIGIN: None -- an lr that is too high is a property of the optimiser, not of one module.

Fix: lr = 0.5 (a normal SGD lr for this LSTM without clipping); same model, data, steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Hashemi et al., 'Learning Memory Access Patterns', ICML 2018 (LSTM delta prefetcher); "
          "pytorch/examples word_language_model default --lr 20 reused without its --clip 0.25")


class DeltaLSTM(nn.Module):
    def __init__(self, n_pc, n_delta, emb, hidden):
        super().__init__()
        self.pc_emb = nn.Embedding(n_pc, emb)
        self.delta_emb = nn.Embedding(n_delta, emb)
        self.lstm = nn.LSTM(2 * emb, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, n_delta)

    def forward(self, pcs, deltas):
        h, _ = self.lstm(torch.cat([self.pc_emb(pcs), self.delta_emb(deltas)], -1))
        return self.decoder(h[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 96, 128][seed % 3]
    emb = [16, 24, 32][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = 0.5 if fixed else [20.0, 30.0, 40.0][seed % 3]
    steps = 120
    n_pc, n_delta, T = 16, 32, 8

    torch.manual_seed(seed)
    model = DeltaLSTM(n_pc, n_delta, emb, hidden)
    # each PC walks a strided pattern; next delta depends on the PC and the previous delta
    pattern = torch.randint(0, n_delta, (n_pc, 4), generator=g)
    batches = []
    for _ in range(steps):
        pc = torch.randint(0, n_pc, (bs,), generator=g)
        phase = torch.randint(0, 4, (bs,), generator=g)
        idx = (phase.unsqueeze(1) + torch.arange(T + 1)) % 4
        seq = pattern[pc.unsqueeze(1), idx]
        noise = torch.rand(bs, T + 1, generator=g) < 0.1
        seq = torch.where(noise, torch.randint(0, n_delta, (bs, T + 1), generator=g), seq)
        pcs = pc.unsqueeze(1).expand(bs, T)
        batches.append(((pcs, seq[:, :T]), seq[:, T]))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
