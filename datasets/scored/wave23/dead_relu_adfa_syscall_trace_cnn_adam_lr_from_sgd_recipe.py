"""Host-based intrusion detection on system-call traces (ADFA-LD style):
syscall embedding -> stack of Conv1d/ReLU layers -> global max pool ->
attack/normal head, trained with Adam at the learning rate of the SGD recipe
the architecture was copied from.

Mechanism: the reference implementation trains this CNN with SGD lr = 0.05-0.1;
the port swapped in ``torch.optim.Adam`` and kept the lr.  Adam's update is
~lr per weight in the sign of the gradient regardless of the gradient's
size, so the first steps move every conv kernel entry and bias by 0.05-0.1 -
far larger than the init scale (~0.1).  Channels whose kernels and biases are
driven negative give a negative pre-activation at every position of every
trace; their ReLU outputs 0, the max-pool passes 0, and they never receive a
gradient again.  The second conv block is where this happens first: its
inputs are the non-negative outputs of the first ReLU, so a kernel pushed
negative is negative everywhere.  Within the first few dozen steps that
layer (and the ones after it) is dead, the pooled feature vector is constant
and the loss sits at log(2) - a plateau with no non-finite value.

ORIGIN: ``convs.3`` - the ReLU of the second conv block, whose channels die
first and completely (the first block's ReLU, fed by symmetric embeddings,
stays alive).

Fix: an Adam learning rate (2e-3); same optimiser, model, init and data.
"""
import random

import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "convs.3"
SOURCE = ("ADFA-LD host intrusion detection with CNNs over system-call sequences (Creech & Hu 2013; "
          "Kolosnjaji et al. 2016); swapping Adam into an SGD recipe without lowering the lr, "
          "dying ReLU ('more than half of my ReLU channels output zero after a few iterations', "
          "PyTorch forums)")

N_SYS = 64      # distinct syscall ids kept
SEQ = 96


class SyscallCNN(nn.Module):
    def __init__(self, emb, ch, depth, k):
        super().__init__()
        self.embed = nn.Embedding(N_SYS, emb)
        layers, c = [], emb
        for _ in range(depth):
            layers += [nn.Conv1d(c, ch, k, padding=k // 2), nn.ReLU()]
            c = ch
        self.convs = nn.Sequential(*layers)
        self.head = nn.Linear(ch, 2)

    def forward(self, x):
        h = self.convs(self.embed(x).transpose(1, 2))
        return self.head(h.amax(dim=2))


def _traces(g, n, trans_normal, attack_grams):
    y = (torch.rand(n, generator=g) < 0.5).long()
    x = torch.empty(n, SEQ, dtype=torch.long)
    s = torch.randint(0, N_SYS, (n,), generator=g)
    for t in range(SEQ):           # normal program behaviour: a sparse Markov chain over syscalls
        x[:, t] = s
        s = torch.multinomial(trans_normal[s], 1, generator=g).squeeze(1)
    for i in range(n):             # attacks: exploit-specific syscall trigrams (execve/dup2/...)
        if y[i] == 1:
            for _ in range(5):
                gram = attack_grams[int(torch.randint(0, len(attack_grams), (1,), generator=g))]
                p = int(torch.randint(0, SEQ - 3, (1,), generator=g))
                x[i, p:p + 3] = gram
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    emb = r.choice([8, 16])
    ch = r.choice([12, 16, 20])
    depth = r.choice([3, 4])
    k = r.choice([3, 5])
    sgd_lr = r.choice([0.05, 0.08, 0.1])
    bs = r.choice([32, 48, 64])
    steps = r.choice([80, 100, 120])

    g = torch.Generator().manual_seed(7000 + seed)
    logits = torch.randn(N_SYS, N_SYS, generator=g) * 2.5
    trans_normal = torch.softmax(logits, 1)
    attack_grams = [torch.randint(0, N_SYS, (3,), generator=g) for _ in range(4)]
    batches = [_traces(g, bs, trans_normal, attack_grams) for _ in range(steps)]

    torch.manual_seed(seed)
    model = SyscallCNN(emb, ch, depth, k)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3 if fixed else sgd_lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
