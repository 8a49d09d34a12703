"""Kim (2014) CNN sentence classifier whose conv filter biases are initialised to a large
negative "detection threshold" (nn.init.constant_(conv.bias, -4..-6)) so that filters only
fire on strong n-gram matches.

Mechanism: with N(0,1) embeddings and default conv weights the pre-activations have std ~0.6,
so a bias of -4 or lower puts every filter position far below zero.  The shared ReLU after the
convolutions (module `act`) outputs exactly 0 everywhere from step 0, max-over-time pooling
returns 0, and no gradient ever reaches the convolutions or embeddings.  Only the output bias
learns, so the loss sits at the class-prior entropy with no jump at all.
ORIGIN: `act`, the ReLU whose units are all dead from the first step.
Fix: keep PyTorch's default conv bias init (the threshold line removed).
"""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "act"
SOURCE = "Kim 2014 CNN-for-sentence-classification PyTorch ports (Adadelta, lr=1.0); forum reports of 'CNN text classifier stuck at chance' after adding a negative bias init to conv filters"


class KimCNN(nn.Module):
    def __init__(self, vocab, emb, nf, ks, ncls):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.convs = nn.ModuleList([nn.Conv1d(emb, nf, k) for k in ks])
        self.act = nn.ReLU()
        self.drop = nn.Dropout(0.0)
        self.fc = nn.Linear(nf * len(ks), ncls)

    def forward(self, x):
        e = self.embed(x).transpose(1, 2)
        h = [self.act(c(e)).max(dim=2).values for c in self.convs]
        return self.fc(self.drop(torch.cat(h, 1)))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(emb=32, nf=24, bs=32, L=24, lr=1.0, b=-4.0, steps=120),
           dict(emb=48, nf=16, bs=48, L=30, lr=1.0, b=-5.0, steps=100),
           dict(emb=24, nf=32, bs=24, L=20, lr=0.8, b=-6.0, steps=140)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    V, C = 300, 3
    model = KimCNN(V, cfg["emb"], cfg["nf"], (3, 4, 5), C)
    if not fixed:
        for c in model.convs:
            nn.init.constant_(c.bias, cfg["b"])
    cues = torch.arange(10, 10 + 3 * C).view(C, 3)  # each class marked by a cue trigram
    batches = []
    for _ in range(cfg["steps"]):
        x = torch.randint(40, V, (cfg["bs"], cfg["L"]), generator=g)
        y = torch.randint(0, C, (cfg["bs"],), generator=g)
        pos = torch.randint(0, cfg["L"] - 3, (cfg["bs"],), generator=g)
        for i in range(cfg["bs"]):
            x[i, pos[i]:pos[i] + 3] = cues[y[i]]
        batches.append((x, y))
    opt = torch.optim.Adadelta(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
