"""Deep ReLU classification probe on a frozen pretrained-style transformer encoder, initialised
with nn.init.normal_(w, std=0.01) (the old Caffe/'small gaussian' recipe) on every head Linear.

Mechanism: each Linear of the 5-7 layer probe multiplies the activation scale by about
0.01*sqrt(width/2) ~ 0.05, so the signal (and the backward gradient) shrinks geometrically with
depth from step 0: the logits equal the last bias, the early head layers receive ~1e-8 gradients
and the loss sits at log(2) (a stall). The encoder is frozen, so nothing else can learn.
ORIGIN: head.0, the first badly initialised probe layer where the shrinking starts.
Fix: kaiming_normal_ (fan_in, relu) init of the probe layers.
"""
import torch, torch.nn as nn
CAUSE = "bad_init"
ORIGIN = "head.0"
SOURCE = "linear/MLP probing of frozen encoders (SentEval-style) with Caffe-era gaussian std=0.01 init; vanishing signal in deep plain ReLU MLPs (He et al. 2015)"

class Probe(nn.Module):
    def __init__(self, V, d, depth, width):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        mods, w = [], d
        for _ in range(depth):
            mods += [nn.Linear(w, width), nn.ReLU()]; w = width
        mods.append(nn.Linear(w, 2))
        self.head = nn.Sequential(*mods)
    def forward(self, x):
        h = self.encoder(self.emb(x)).mean(1)
        return self.head(h)

def build(seed: int, fixed: bool = False) -> dict:
    depth, width, lr, B = [(5, 64, 0.05, 32), (6, 96, 0.03, 24), (7, 64, 0.05, 48)][seed % 3]
    torch.manual_seed(seed)
    V, d, T, steps = 40, 48, 16, 120
    model = Probe(V, d, depth, width)
    for p in list(model.emb.parameters()) + list(model.encoder.parameters()):
        p.requires_grad_(False)
    for m in model.head:
        if isinstance(m, nn.Linear):
            if fixed: nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else: nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)
    g = torch.Generator().manual_seed(1000 + seed)
    batches = []
    for _ in range(steps):
        x = torch.randint(0, V, (B, T), generator=g)
        y = ((x < 10).sum(1) > (x >= 30).sum(1)).long()   # "sentiment": positive vs negative word counts
        batches.append((x, y))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
