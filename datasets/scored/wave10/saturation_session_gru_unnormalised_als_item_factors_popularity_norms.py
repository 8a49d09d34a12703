"""Session-based purchase-intent model: the items a user viewed in a session are looked up in a
frozen table of pretrained item factors exported from the feature store (implicit-ALS factors)
and fed to a GRU whose last hidden state gives a "will purchase" logit. Implicit-ALS factors are
not normalised: their norms grow with item popularity (here ~40 to ~150), and nobody rescales
them before the recurrent layer. The GRU's input projections therefore produce pre-activations
of tens of units, so its sigmoid update/reset gates sit at 0 or 1 and its tanh candidate at +-1
for every step and every session: the hidden state is a sign pattern of the last inputs, the
local derivatives sigma'(.) and tanh'(.) are ~0, and SGD cannot move the recurrent weights. The
loss stays at (or slightly above) the base-rate entropy, finite throughout. Fixed: the factors are
L2-normalised (cosine geometry, as the ALS recommendations themselves use) and rescaled to unit
RMS per coordinate before the GRU; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "gru"
SOURCE = ("Implicit-ALS (Hu, Koren & Volinsky 2008) item factors whose norms track popularity, reused "
          "as GRU4Rec-style inputs without normalisation; saturating GRU gates (Hochreiter 1991 / "
          "Pascanu et al. 2013 vanishing gradients)")

N_ITEMS, K, H, T = 400, 24, 32, 10


class SessionIntent(nn.Module):
    def __init__(self, factors, normalise):
        super().__init__()
        self.items = nn.Embedding.from_pretrained(factors, freeze=True)
        self.normalise = normalise
        self.gru = nn.GRU(K, H, batch_first=True)
        self.out = nn.Linear(H, 1)

    def forward(self, item_ids):
        x = self.items(item_ids)
        if self.normalise:
            x = F.normalize(x, dim=-1) * K ** 0.5       # unit RMS per coordinate
        _, h = self.gru(x)
        return self.out(h[-1]).squeeze(-1)


def loss_fn(logit, y):
    return F.binary_cross_entropy_with_logits(logit, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    direction = F.normalize(torch.randn(N_ITEMS, K, generator=g), dim=-1)
    popularity = torch.rand(N_ITEMS, generator=g)
    factors = direction * (40.0 + 110.0 * popularity).unsqueeze(-1)    # norm grows with popularity
    model = SessionIntent(factors, normalise=fixed)
    intent_dir = F.normalize(torch.randn(K, generator=g), dim=0)
    item_intent = direction @ intent_dir                                # cosine to a "buying" direction
    steps, bs = 200, 64
    batches = []
    for _ in range(steps):
        items = torch.randint(0, N_ITEMS, (bs, T), generator=g)
        score = item_intent[items].mean(1) * 50.0
        y = (torch.rand(bs, generator=g) < torch.sigmoid(score)).float()
        batches.append((items, y))
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
