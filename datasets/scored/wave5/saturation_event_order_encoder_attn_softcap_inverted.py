"""A one-layer Transformer encoder reads event-log sequences (a [CLS] token, two key events
LOGIN and ACCESS at random positions, filler events elsewhere) and predicts from the [CLS]
state whether LOGIN happened before ACCESS. The attention uses Gemma-2-style logit
soft-capping, scores <- cap * tanh(scores / cap) with cap = 20, meant to be the identity for
ordinary logits. The hand-written version has the scaling inverted, tanh(scores * cap) / cap:
every tanh pre-activation is multiplied by 20, so nearly all scores sit on the flat part of
tanh (tanh' ~ 0) and the capped logits are squeezed into [-0.05, 0.05]. The softmax is then
(almost) uniform, the [CLS] state is just the bag of events, which carries no order
information, and the gradient reaching the query/key projections through the saturated tanh is
~0, so the heads never learn to find the two events. The loss sits at log 2 with no NaN
anywhere. The fix only restores cap * tanh(scores / cap), i.e. small tanh pre-activations.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "layers.0.attn"
SOURCE = ("Gemma 2 attention logit soft-capping (cap * tanh(logits / cap)); soft-capping "
          "re-implementations with the scaling inverted (tanh saturation, uniform attention)")

V, D, H, T, CAP = 32, 32, 4, 20, 20.0
CLS, LOGIN, ACCESS = 0, 1, 2


class SoftCapAttention(nn.Module):
    def __init__(self, inverted):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.o = nn.Linear(D, D)
        self.inverted = inverted

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, H, D // H).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-1, -2) / (D // H) ** 0.5
        if self.inverted:
            s = torch.tanh(s * CAP) / CAP          # root cause: scale applied the wrong way
        else:
            s = CAP * torch.tanh(s / CAP)
        out = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, t, D)
        return self.o(out)


class Layer(nn.Module):
    def __init__(self, inverted):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = SoftCapAttention(inverted)
        self.ln2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class EventOrderClassifier(nn.Module):
    def __init__(self, inverted):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(T, D)
        self.layers = nn.ModuleList([Layer(inverted)])
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, 2)

    def forward(self, ids):
        h = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        for layer in self.layers:
            h = layer(h)
        return self.head(self.ln_f(h[:, 0]))


def _batch(g, bs):
    ids = torch.randint(3, V, (bs, T), generator=g)
    ids[:, 0] = CLS
    pa = torch.empty(bs, dtype=torch.long)
    pb = torch.empty(bs, dtype=torch.long)
    for i in range(bs):
        p = torch.randperm(T - 1, generator=g)[:2] + 1
        pa[i], pb[i] = p[0], p[1]
    ids[torch.arange(bs), pa] = LOGIN
    ids[torch.arange(bs), pb] = ACCESS
    return ids, (pa < pb).long()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = EventOrderClassifier(inverted=not fixed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps, bs = 200, 64
    batches = [_batch(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
