"""Keyboard next-word prediction with a Bengio-style neural probabilistic LM (NPLM): embeddings
of the previous 3 words, concatenated, one ReLU hidden layer, softmax over the keyboard
vocabulary. Trained centrally as the baseline before federating it.

Mechanism: the optimiser settings were copied from the FedAvgM *server* config of the
federated keyboard project (SGD, lr 1.0-2.0, momentum 0.9). On the server that lr multiplies an
averaged client delta, not a raw minibatch gradient; used centrally it gives an effective step
of lr/(1-momentum) = 10-20 on raw gradients. The hidden layer is an unbounded ReLU fed by
N(0,1) embeddings (the nn.Embedding default): within the first steps the accumulated momentum
drives the hidden pre-activations negative for every context, (almost) all hidden units die and
never receive gradient again. Only the output bias keeps learning, and the synthetic corpus has
a uniform marginal over words, so the loss sits at ~ln(V) for the rest of the run.

ORIGIN: "hidden", the Linear feeding the ReLU (`act`) whose units die; its weights and biases
are what the oversized momentum steps push negative.

Fix: the centralised learning rate (lr/10 with the same momentum: an effective step of ~1-2, as
plain client SGD uses) - the units stay alive. Everything else unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "hidden"
SOURCE = ("Bengio et al. 2003 NPLM; FedAvgM server optimiser settings (Hsu et al. 2019; Hard et "
          "al. 2018 keyboard FL) reused as a centralised optimiser; dying ReLU under oversized "
          "SGD steps (cs231n notes, Lu et al. 2019 'Dying ReLU and initialization')")


class NPLM(nn.Module):
    def __init__(self, V, d, ctx, hidden):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        self.hidden = nn.Linear(ctx * d, hidden)
        self.act = nn.ReLU()
        self.out = nn.Linear(hidden, V)

    def forward(self, ctx):
        e = self.emb(ctx).flatten(1)
        return self.out(self.act(self.hidden(e)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    V = [200, 160, 240][seed % 3]
    d = [32, 24, 32][seed % 3]
    hidden = [128, 96, 160][seed % 3]
    lr = [1.0, 1.5, 2.0][seed % 3]
    bs = [64, 48, 80][seed % 3]
    steps = 200
    ctx = 3
    model = NPLM(V, d, ctx, hidden)
    # synthetic 'typing' corpus: the next word is a fixed successor of the previous word
    # (a permutation, plus 10% noise); the marginal over words is uniform, so a unigram model
    # (the output bias alone) is no help.
    perm = torch.randperm(V, generator=g)
    batches = []
    for _ in range(steps):
        c = torch.randint(0, V, (bs, ctx), generator=g)
        y = perm[c[:, -1]]
        noise = torch.rand(bs, generator=g) < 0.1
        y = torch.where(noise, torch.randint(0, V, (bs,), generator=g), y)
        batches.append((c, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr / 10 if fixed else lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
