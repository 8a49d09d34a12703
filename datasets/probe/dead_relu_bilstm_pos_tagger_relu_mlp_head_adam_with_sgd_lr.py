"""BiLSTM POS tagger with a ReLU MLP scoring head, trained with Adam at lr=0.7-1.5 -- the
learning rate of the SGD recipe the tagger was ported from (Adam was swapped in, the lr kept).

Mechanism: Adam's normalised first steps are ~lr in size for every weight, so at lr~1 the
head's first Linear receives updates of the same order as its weights.  Within a few steps the
pre-activations of the hidden layer are pushed below zero for every token, the head ReLU
(`head.1`) dies, the tag logits collapse to the output bias, and the loss jumps up and then
sits flat at the tag-prior entropy: no gradient reaches the LSTM any more.
ORIGIN: `head.1`, the ReLU of the scoring MLP whose units die.
Fix: Adam's usual lr=2e-3.
"""
import torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.1"
SOURCE = "PyTorch sequence-models tutorial LSTM tagger ported to Adam with the SGD lr kept; forum threads 'BiLSTM tagger predicts the same tag for every token after a few steps'"


class Tagger(nn.Module):
    def __init__(self, V, E, H, M, T):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.lstm = nn.LSTM(E, H, batch_first=True, bidirectional=True)
        self.head = nn.Sequential(nn.Linear(2 * H, M), nn.ReLU(), nn.Linear(M, T))

    def forward(self, x):
        h, _ = self.lstm(self.embed(x))
        return self.head(h).reshape(-1, self.head[-1].out_features)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(E=32, H=32, M=64, bs=32, L=16, lr=1.0, steps=120),
           dict(E=24, H=48, M=96, bs=24, L=20, lr=0.7, steps=100),
           dict(E=48, H=24, M=48, bs=40, L=12, lr=1.5, steps=140)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    V, T = 200, 8
    lex = torch.randint(0, T, (V,), generator=g)        # word -> default tag
    amb = torch.rand(V, generator=g) < 0.2             # ambiguous words: tag depends on left word
    model = Tagger(V, cfg["E"], cfg["H"], cfg["M"], T)
    batches = []
    for _ in range(cfg["steps"]):
        x = torch.randint(0, V, (cfg["bs"], cfg["L"]), generator=g)
        y = lex[x].clone()
        prev = torch.cat([torch.zeros(cfg["bs"], 1, dtype=torch.long), x[:, :-1]], 1)
        y = torch.where(amb[x], (y + lex[prev]) % T, y)
        batches.append((x, y.reshape(-1)))
    lr = 2e-3 if fixed else cfg["lr"]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
