"""Implicit-feedback matrix factorisation with confidence weights (Hu, Koren & Volinsky 2008 WMF,
trained by SGD on sampled (user, item) cells as in neural re-implementations): the preference
p_ui = 1[plays > 0] is fitted with a squared error weighted by c_ui = 1 + alpha * plays,
alpha = 0.5. Play counts in the log are in the tens, so confidences are O(10) and the run is calm.
One mid-run batch contains the rows of a scrobbling bot account whose play counts for a few tracks
are in the millions (Last.fm-style spam), giving confidences around 1e6: on that step the weighted
loss and its gradient on the bot's user vector and those items' vectors are ~1e5 times the normal
size, the SGD update throws the embeddings to huge values, the next batches' predictions overflow,
and the loss turns inf/NaN. The fix drops the bot account's rows from that batch (its plays are set
to the ordinary cap used for everyone else, 200), nothing else changes."""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "Hu, Koren & Volinsky 2008 'Collaborative Filtering for Implicit Feedback Datasets'; Last.fm scrobble-bot outliers in implicit-feedback data"

N_USERS, N_ITEMS, DIM, STEPS, BATCH, BAD_STEP = 400, 300, 16, 200, 512, 90
ALPHA, PLAY_CAP = 0.5, 200.0


class WMF(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(N_USERS, DIM)
        self.item = nn.Embedding(N_ITEMS, DIM)
        self.item_bias = nn.Embedding(N_ITEMS, 1)
        for e in (self.user, self.item):
            nn.init.normal_(e.weight, std=0.1)
        nn.init.zeros_(self.item_bias.weight)

    def forward(self, u, i):
        return (self.user(u) * self.item(i)).sum(-1) + self.item_bias(i).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(15000 + seed)
    model = WMF()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    uf = torch.randn(N_USERS, 4, generator=g)
    vf = torch.randn(N_ITEMS, 4, generator=g)
    rate = torch.exp((uf @ vf.t()) * 0.8 - 1.5)                     # expected plays per cell
    batches = []
    for step in range(STEPS):
        u = torch.randint(0, N_USERS, (BATCH,), generator=g)
        i = torch.randint(0, N_ITEMS, (BATCH,), generator=g)
        plays = torch.poisson(rate[u, i], generator=g).clamp(max=PLAY_CAP)
        if step == BAD_STEP:
            bot = torch.randint(0, N_USERS, (1,), generator=g)
            u[:8] = bot
            plays[:8] = 1e6 * (1 + torch.rand(8, generator=g))       # scrobble bot
            if fixed:
                plays[:8] = plays[:8].clamp(max=PLAY_CAP)
        pref = (plays > 0).float()
        conf = 1 + ALPHA * plays
        batches.append(((u, i), (pref, conf)))

    def loss_fn(pred, target):
        pref, conf = target
        return (conf * (pred - pref) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
