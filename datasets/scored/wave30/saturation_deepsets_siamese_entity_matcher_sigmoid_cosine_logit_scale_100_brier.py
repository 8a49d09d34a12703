"""Siamese Deep-Sets entity matcher scoring pairs with a scaled cosine through a sigmoid.

Model: a record is a bag of tokens (name / brand / model-number pieces). The shared encoder
embeds the tokens, mean-pools them and runs a two-layer MLP (`encoder`); the two record vectors
are compared by cosine similarity, multiplied by a logit scale and squashed by `match_prob`
(nn.Sigmoid) into a match probability. Loss: the Brier score (MSE between probability and the
0/1 label), optimiser SGD with momentum.

Mechanism: the logit scale 1/tau = 100 was copied from a contrastive (InfoNCE / CLIP-style)
pre-training config, where it multiplies cosine similarities fed to a softmax over many
candidates. Here it feeds a single sigmoid: the encoder's outputs share a common direction at
initialisation (bias and mean pooling), so every pair's cosine is ~0.3-1.0 and the sigmoid input
is 30-100. `match_prob` is saturated at 1.0 for matches and non-matches alike; its derivative
p (1 - p) is 1e-14 or (much) smaller, the Brier gradient through it vanishes, and the loss stays
at the fraction of non-matching pairs for the whole run (a stall without any non-finite value).

ORIGIN: `match_prob` -- the sigmoid is the unit that saturates; the encoder upstream is healthy
but receives no gradient through it.

Fix: a logit scale of 5 (smaller pre-activations for the sigmoid); same model, optimiser, data
and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "match_prob"
SOURCE = ("CLIP / SimCSE-style logit_scale = 1/0.01..1/0.05 reused for a sigmoid pairwise "
          "matcher; forum reports 'siamese network outputs always 1, loss does not decrease' "
          "with sigmoid(scale * cosine) and MSE")


class SiameseMatcher(nn.Module):
    def __init__(self, vocab, d, hidden, scale):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.encoder = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.match_prob = nn.Sigmoid()
        self.scale = scale

    def encode(self, toks):
        return self.encoder(self.emb(toks).mean(1))

    def forward(self, a, b):
        cos = F.cosine_similarity(self.encode(a), self.encode(b), dim=-1)
        return self.match_prob(self.scale * cos)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    vocab = 600
    d = [32, 48, 24][seed % 3]
    hidden = [64, 96, 128][seed % 3]
    n_tok = [8, 10, 6][seed % 3]
    batch = [64, 48, 80][seed % 3]
    steps = [150, 170, 130][seed % 3]
    lr = [0.1, 0.05, 0.08][seed % 3]
    scale = 5.0 if fixed else 100.0

    n_ent = 300
    ent_tok = torch.randint(0, vocab, (n_ent, n_tok), generator=g)

    def record(ids):
        t = ent_tok[ids].clone()
        noise = torch.rand(t.shape, generator=g) < 0.3             # typos / missing pieces
        t[noise] = torch.randint(0, vocab, (int(noise.sum()),), generator=g)
        return t

    batches = []
    for _ in range(steps):
        a = torch.randint(0, n_ent, (batch,), generator=g)
        match = torch.rand(batch, generator=g) < 0.5
        b = torch.where(match, a, torch.randint(0, n_ent, (batch,), generator=g))
        batches.append(((record(a), record(b)), match.float()))

    model = SiameseMatcher(vocab, d, hidden, scale)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
