"""Chen & Manning (2014) style transition-based dependency parser classifier.

Model: 18 configuration features (words / POS tags / arc labels of the top stack and buffer
items) are looked up in one embedding table, concatenated, passed through one hidden layer with
the paper's cube activation h = (W x + b)^3, and a log-softmax over the arc-standard transitions
(SHIFT plus LEFT-ARC/RIGHT-ARC per label). Loss: NLLLoss on the log-probabilities.

Mechanism: the paper trains with AdaGrad at lr 0.01. This port swapped in SGD with momentum 0.9
and kept the learning rate of the ReLU tagger it was copied from (0.3-0.5 by seed). The cube
activation's derivative 3 (W x + b)^2 grows with the pre-activation, so each overshooting update
enlarges the next gradient: the hidden pre-activations blow up within a few dozen steps and the
loss becomes inf/NaN. Update/weight ratios are far above 1e-3 from the first steps.

ORIGIN: None -- an lr that is too high is a property of the optimiser, not of one module; the
divergence is global (embeddings, hidden and output weights all overshoot together).

Fix: lower the learning rate to 0.03 (same optimiser, model, data and steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Chen & Manning 2014 'A Fast and Accurate Dependency Parser using Neural Networks' "
          "(cube activation, AdaGrad lr 0.01); re-implementations that switch to momentum SGD "
          "with a ReLU-MLP learning rate report NaN losses within the first epoch")


class CubeParser(nn.Module):
    def __init__(self, vocab, n_feats, emb, hidden, n_trans):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.hidden = nn.Linear(n_feats * emb, hidden)
        self.out = nn.Linear(hidden, n_trans)
        nn.init.normal_(self.embed.weight, 0.0, 0.3)
        nn.init.xavier_uniform_(self.hidden.weight)

    def forward(self, feats):
        x = self.embed(feats).flatten(1)
        h = self.hidden(x) ** 3
        return torch.log_softmax(self.out(h), dim=-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    vocab, n_feats = 120, 18
    emb = [32, 48, 40][seed % 3]
    hidden = [128, 200, 160][seed % 3]
    n_labels = [6, 8, 10][seed % 3]
    n_trans = 2 * n_labels + 1
    batch = [64, 96, 48][seed % 3]
    steps = [150, 160, 140][seed % 3]
    lr = 0.03 if fixed else [0.5, 0.3, 0.4][seed % 3]

    # slots 0-5 are POS-tag features (20 tags), the rest word / label ids; the gold transition
    # is decided by the tags of s1, s2 and b1 (a table-driven oracle)
    table = torch.randn(3, vocab, n_trans, generator=g) * 2.0
    batches = []
    for _ in range(steps):
        feats = torch.randint(0, vocab, (batch, n_feats), generator=g)
        feats[:, :6] = torch.randint(0, 20, (batch, 6), generator=g)
        score = sum(table[i][feats[:, i]] for i in range(3))
        y = score.argmax(-1)
        batches.append((feats, y))

    model = CubeParser(vocab, n_feats, emb, hidden, n_trans)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.NLLLoss(), batches=batches, steps=steps)
