"""Window-based sequence tagger (Collobert/SENNA style): embeddings of a 3-token window are
concatenated and passed through a stack of highway layers, then a linear tag classifier.
Highway layer: y = T(x) * relu(W_h x) + (1 - T(x)) * x with transform gate T = sigmoid(W_t x + b_t).
Srivastava et al. recommend a negative gate bias (-1..-3) to favour carrying; the user
initialises b_t = -10 ('more negative = more stable').

Mechanism: sigmoid(-10) = 4.5e-5, the gates are saturated closed: the transform branch is
multiplied by ~0 and the gate's own gradient sigmoid' ~ 4.5e-5 is vanishing, so neither W_h nor
the gates learn. The stack is an identity carry of the concatenated embeddings; the tag depends
on an interaction of the window tokens that a linear classifier on concatenated embeddings cannot
represent, so the loss plateaus near its start.
ORIGIN: layers.0.gate_act, the first saturated transform-gate sigmoid.
Fix: the recommended gate bias -1.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "saturation"
ORIGIN = "layers.0.gate_act"
SOURCE = "Highway networks (Srivastava et al. 2015) in character/word taggers (ELMo char-CNN highway, SENNA windows) with an over-negative transform-gate bias"

class Highway(nn.Module):
    def __init__(s, d, gate_bias):
        super().__init__()
        s.h = nn.Linear(d, d); s.t = nn.Linear(d, d); s.gate_act = nn.Sigmoid()
        nn.init.constant_(s.t.bias, gate_bias)
    def forward(s, x):
        t = s.gate_act(s.t(x))
        return t * F.relu(s.h(x)) + (1 - t) * x

class WindowTagger(nn.Module):
    def __init__(s, V, m, depth, K, gate_bias):
        super().__init__()
        s.emb = nn.Embedding(V, m)
        s.layers = nn.Sequential(*[Highway(3 * m, gate_bias) for _ in range(depth)])
        s.classifier = nn.Linear(3 * m, K)
    def forward(s, x):                             # x: (B, T) token ids
        e = s.emb(F.pad(x, (1, 1)))                  # pad id 0 at both ends
        w = torch.cat([e[:, :-2], e[:, 1:-1], e[:, 2:]], -1)
        return s.classifier(s.layers(w))

def build(seed: int, fixed: bool = False) -> dict:
    depth, m, lr, B = [(2, 16, 0.3, 32), (3, 24, 0.2, 24), (4, 16, 0.3, 16)][seed % 3]
    torch.manual_seed(seed)
    V, K, T, steps = 24, 4, 20, 200
    model = WindowTagger(V, m, depth, K, -1.0 if fixed else -10.0)
    g = torch.Generator().manual_seed(5 + seed)
    batches = []
    for _ in range(steps):
        x = torch.randint(1, V, (B, T), generator=g)
        p = F.pad(x, (1, 1))
        l, r = p[:, :-2], p[:, 2:]                   # tag = XOR features of (left, right) neighbours only
        tag = 2 * ((l % 2) ^ (r % 2)) + (((l // 2) % 2) ^ ((r // 2) % 2))
        batches.append((x, tag))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)   # SENNA-style SGD
    loss_fn = lambda out, y: F.cross_entropy(out.reshape(-1, K), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
