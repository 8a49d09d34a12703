"""dead_relu: SENNA-style window-approach NER tagger (Collobert et al. 2011) with ReLU hidden
layers, summed window NLL, batch size raised without rescaling the lr.

Mechanism: each word is tagged from the concatenated embeddings of a 5-word window fed to a
3-layer ReLU MLP.  Following SENNA the objective is the per-window NLL *summed* over the
minibatch (reduction="sum"), and the SGD lr was tuned at batch 32.  The user raised the batch
to 192-320 for throughput and kept the lr, so each step is 6-10x larger than tuned.  The
first few steps overshoot, the pre-activations of the deepest hidden layer are pushed
negative for every input, its ReLUs stop firing (>98% of units silent on every window)
and pass no gradient back, the layer below is left with ~5% live units, and the loss sits
at ln(n_tags) for the rest of the run.

ORIGIN: "hidden.5" (the last hidden ReLU, the layer whose units all die).
Fix: rescale the lr to the batch (lr * 32 / batch) - the only change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "hidden.5"
SOURCE = ("Collobert et al. JMLR 2011 'Natural Language Processing (almost) from Scratch' "
          "(window approach, plain SGD); known pattern: reduction='sum' loss with the batch "
          "size raised and the lr left unchanged, killing ReLU layers")


class WindowTagger(nn.Module):
    def __init__(self, vocab, emb, caps_dim, win, hid, n_tags):
        super().__init__()
        self.lookup = nn.Embedding(vocab, emb)
        self.caps = nn.Embedding(4, caps_dim)
        d = win * (emb + caps_dim)
        self.hidden = nn.Sequential(nn.Linear(d, hid), nn.ReLU(),
                                    nn.Linear(hid, hid), nn.ReLU(),
                                    nn.Linear(hid, hid), nn.ReLU())
        self.out = nn.Linear(hid, n_tags)

    def forward(self, words, caps):
        x = torch.cat([self.lookup(words), self.caps(caps)], -1).flatten(1)
        return self.out(self.hidden(x))


def summed_nll(logits, tags):
    return F.cross_entropy(logits, tags, reduction="sum")


def _windows(g, n, vocab, n_tags, win):
    word_class = torch.randint(0, n_tags, (vocab,), generator=g)
    word_caps = torch.randint(0, 4, (vocab,), generator=g)
    words = torch.randint(0, vocab, (n, win), generator=g)
    c = word_class[words[:, win // 2]]
    left = word_class[words[:, win // 2 - 1]]
    tags = torch.where(left == 0, (c + 1) % n_tags, c)      # context-dependent tag
    return words, word_caps[words], tags


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(vocab=300, emb=50, caps=5, hid=300, tags=5, bs=256, steps=130, lr=0.03),
           dict(vocab=400, emb=40, caps=5, hid=256, tags=5, bs=192, steps=190, lr=0.04),
           dict(vocab=250, emb=50, caps=5, hid=320, tags=6, bs=320, steps=120, lr=0.025)][seed % 3]
    win = 5
    model = WindowTagger(cfg["vocab"], cfg["emb"], cfg["caps"], win, cfg["hid"], cfg["tags"])
    lr = cfg["lr"] * 32 / cfg["bs"] if fixed else cfg["lr"]     # lr was tuned at batch 32
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    bs = cfg["bs"]
    words, caps, tags = _windows(g, cfg["steps"] * bs, cfg["vocab"], cfg["tags"], win)
    batches = [((words[i * bs:(i + 1) * bs], caps[i * bs:(i + 1) * bs]), tags[i * bs:(i + 1) * bs])
               for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=summed_nll, batches=batches, steps=cfg["steps"])
