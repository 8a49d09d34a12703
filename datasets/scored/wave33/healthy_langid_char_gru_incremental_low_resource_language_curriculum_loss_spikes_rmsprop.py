"""Character-GRU language identifier trained with an incremental curriculum: it starts on the
high-resource languages of a region and new low-resource languages (often closely related
varieties written in the same script) are switched on at fixed points of the schedule as
their data is cleaned.  The softmax covers all languages from the start.  RMSprop.

Why a naive monitor might flag it (all healthy):
- Each time a new group of languages enters the data (two or three times, at seed-dependent
  steps) the loss jumps well above its running level -- the model has never seen those
  classes and confidently assigns the new sentences to their related high-resource
  languages -- and then recovers within a few dozen steps.
- Before a language is introduced its output row only receives "push-down" gradients, and its
  logit bias is driven strongly negative; this is expected and reverses once its data arrives.
The loss ends far below its initial value; nothing is non-finite.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Incremental / curriculum training of language identifiers as new low-resource "
          "languages are added (e.g. AfroLID, GlotLID data releases; Jauhiainen et al. 2019 "
          "survey of automatic language identification); catastrophic spikes when new classes "
          "appear in class-incremental learning.")

N_CHARS = 60


class CharGRULangID(nn.Module):
    def __init__(self, emb, hidden, n_langs):
        super().__init__()
        self.emb = nn.Embedding(N_CHARS, emb)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_langs)

    def forward(self, x):
        _, h = self.gru(self.emb(x))
        return self.out(h[-1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 96, 48][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 48, 24][seed % 3]
    stages = [[0, 50, 110], [0, 70, 140], [0, 40, 90, 150]][seed % 3]
    steps = 200
    L = 20
    n_base = 4
    per_stage = 3
    n_langs = n_base + per_stage * (len(stages) - 1)

    torch.manual_seed(seed)
    model = CharGRULangID(24, hidden, n_langs)

    # base languages have distinct profiles; each later language is a related variety of a
    # base language (shared characters, a few distinctive ones)
    prof = torch.rand(n_langs, N_CHARS, generator=g).pow(5)
    for k in range(n_base, n_langs):
        parent = int(torch.randint(0, n_base, (1,), generator=g))
        prof[k] = 0.6 * prof[parent] + 0.4 * prof[k]
    prof = prof / prof.sum(1, keepdim=True)

    batches = []
    for step in range(steps):
        n_active = n_base + per_stage * (sum(step >= s for s in stages) - 1)
        y = torch.randint(0, n_active, (bs,), generator=g)
        x = torch.stack([torch.multinomial(prof[int(c)], L, replacement=True, generator=g) for c in y])
        batches.append((x, y))

    optimizer = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=steps)
