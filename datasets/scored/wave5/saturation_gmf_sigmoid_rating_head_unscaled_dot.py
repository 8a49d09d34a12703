"""Generalised matrix factorisation (GMF/NCF-style) rating model whose prediction is squashed into
the 1..5 star range with `1 + 4 * sigmoid(<u, i> + b)`.  The raw dot product of two 64-d user/item
embeddings (PyTorch's default N(0, 1) embedding tables) has a standard deviation of ~8, so almost
every (user, item) logit sits deep in the flat tails of the sigmoid.  The MSE gradient is multiplied
by sigmoid'(z) ~ 1e-4, the embeddings barely move under SGD and the loss plateaus at the error of a
random +/-saturated predictor.  The fix is the usual one for dot-product scores: scale the dot
product by 1/sqrt(d) so that the logits start in the sigmoid's linear range (smaller
pre-activations); nothing else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "squash"
SOURCE = ("NCF/GMF rating prediction with a sigmoid-bounded output (e.g. the 'scaled sigmoid' rating "
          "head in many MovieLens tutorials); saturated sigmoid on unscaled dot-product logits, the "
          "same reason attention uses 1/sqrt(d_k)")

N_USERS, N_ITEMS, DIM = 300, 400, 64


class GMF(nn.Module):
    def __init__(self, scale_dot):
        super().__init__()
        self.user = nn.Embedding(N_USERS, DIM)
        self.item = nn.Embedding(N_ITEMS, DIM)
        self.user_bias = nn.Embedding(N_USERS, 1)
        self.item_bias = nn.Embedding(N_ITEMS, 1)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)
        self.squash = nn.Sigmoid()
        self.scale = 1.0 / math.sqrt(DIM) if scale_dot else 1.0

    def forward(self, users, items):
        z = (self.user(users) * self.item(items)).sum(-1) * self.scale
        z = z + self.user_bias(users).squeeze(-1) + self.item_bias(items).squeeze(-1)
        return 1.0 + 4.0 * self.squash(z)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    pu = torch.randn(N_USERS, 4, generator=g)
    pi = torch.randn(N_ITEMS, 4, generator=g)
    steps, bs = 200, 256
    batches = []
    for _ in range(steps):
        u = torch.randint(0, N_USERS, (bs,), generator=g)
        i = torch.randint(0, N_ITEMS, (bs,), generator=g)
        r = 3.0 + 0.6 * (pu[u] * pi[i]).sum(-1) + 0.3 * torch.randn(bs, generator=g)
        batches.append(((u, i), r.clamp(1.0, 5.0)))
    model = GMF(scale_dot=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=8.0, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
