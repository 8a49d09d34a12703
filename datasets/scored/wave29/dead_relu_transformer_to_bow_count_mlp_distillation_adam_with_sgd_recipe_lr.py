"""Task-specific distillation of a transformer topic classifier into a tiny bag-of-words
ReLU MLP (term-count vectors in, teacher logits cached), loss 0.8*T^2*KL + 0.2*CE, Adam.

Mechanism: the student used to be trained with SGD at lr 0.2-0.3 and the optimiser was
switched to Adam without touching the learning rate.  Adam moves every weight by about lr
per step regardless of the gradient scale, and the inputs are non-negative term counts
(~60 tokens per document), so one step shifts each hidden unit's pre-activation by roughly
+-lr * (total count) ~ +-15 with the same sign for every document.  Units pushed down are
off for every input at once; the ones pushed up overshoot, the loss gradient flips, and they
are pushed off in turn.  Within a few steps every ReLU of the first hidden layer is zero for
all inputs, no gradient reaches any hidden weight again, the output bias alone cannot fit
the teacher, and the loss plateaus at the constant-prediction level (in some seeds it
oscillates above it, as the output bias keeps overshooting at the same lr).  Nothing
non-finite.

ORIGIN: ``mlp.1`` -- the ReLU after the first Linear on the count vectors; its units are the
first to die and everything after it is cut off.

Fix: an Adam-sized learning rate (lr/20, i.e. 0.01-0.015); same student, data, loss, steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "mlp.1"
SOURCE = ("Tang et al. 2019 'Distilling task-specific knowledge from BERT into simple neural "
          "networks'; known pattern: switching SGD->Adam but keeping the SGD learning rate, "
          "ReLU units on non-negative count features all knocked off within a few steps")


class BowStudent(nn.Module):
    def __init__(self, vocab, width, depth, n_cls):
        super().__init__()
        layers, d = [], vocab
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, n_cls))
        self.mlp = nn.Sequential(*layers)

    def forward(self, counts):
        return self.mlp(counts)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(8000 + seed)
    n_cls = 6
    vocab = [400, 300, 500][seed % 3]
    width = [128, 96, 160][seed % 3]
    depth = [2, 3, 2][seed % 3]
    sgd_lr = [0.2, 0.3, 0.25][seed % 3]
    lr = sgd_lr / 20 if fixed else sgd_lr
    bs = [64, 48, 80][seed % 3]
    T = 2.0
    steps = 150

    topic = torch.rand(n_cls, vocab, generator=g) ** 4
    topic = topic / topic.sum(1, keepdim=True)
    background = torch.full((vocab,), 1.0 / vocab)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        probs = 0.5 * topic[y] + 0.5 * background
        idx = torch.multinomial(probs, 60, replacement=True, generator=g)
        counts = torch.zeros(bs, vocab).scatter_add_(1, idx, torch.ones(bs, 60))
        t_logits = 5.0 * F.one_hot(y, n_cls).float() + torch.randn(bs, n_cls, generator=g)
        batches.append((counts, torch.cat([t_logits, y.float().unsqueeze(1)], dim=1)))

    torch.manual_seed(seed)
    model = BowStudent(vocab, width, depth, n_cls)

    def loss_fn(out, tgt):
        t_logits, y = tgt[:, :n_cls], tgt[:, n_cls].long()
        kd = F.kl_div(F.log_softmax(out / T, 1), F.softmax(t_logits / T, 1),
                      reduction="batchmean") * T * T
        return 0.8 * kd + 0.2 * F.cross_entropy(out, y)

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
