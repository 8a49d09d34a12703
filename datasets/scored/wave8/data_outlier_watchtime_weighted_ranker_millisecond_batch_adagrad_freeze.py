"""Ranking model trained with watch-time-weighted logistic regression (YouTube ranking, Covington
et al. 2016): positive impressions are weighted by watch time (seconds / a fixed 300 s scale),
negatives get unit weight, and the model is optimised with Adagrad as is usual for sparse CTR
models.  One early log partition was written by a client release that reported watch time in
milliseconds, so the positives of that single batch carry weights ~1000x too large.  The batch's
loss and gradients are huge; Adagrad's step is self-normalised so nothing explodes, but its
squared-gradient accumulator (which never decays) absorbs g^2 ~ 1e6x the normal value, and from
then on every parameter touched by that batch (the MLP and almost all id embeddings) moves with
an effective learning rate ~1000x smaller: the loss freezes near its starting value, with no NaN.
The fix clips watch time to a 1 h cap before weighting (clean rows are always under the cap,
so only the corrupt batch changes)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Covington et al. RecSys 2016 weighted logistic regression on watch time; unit mix-up "
          "(ms vs s) in logged dwell time; Adagrad accumulator never forgets one huge gradient (Duchi et al. 2011)")

N_USERS, N_ITEMS, EMB, N_CTX = 120, 60, 8, 4
CAP_S, SCALE_S = 3600.0, 300.0


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(N_USERS, EMB)
        self.item = nn.Embedding(N_ITEMS, EMB)
        nn.init.normal_(self.user.weight, std=0.1)
        nn.init.normal_(self.item.weight, std=0.1)
        self.mlp = nn.Sequential(nn.Linear(3 * EMB + N_CTX, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, uid, iid, ctx):
        u, i = self.user(uid), self.item(iid)
        return self.mlp(torch.cat([u, i, u * i, ctx], 1)).squeeze(-1)


def weighted_logloss(logit, target):
    click, weight = target
    return (F.binary_cross_entropy_with_logits(logit, click, reduction="none") * weight).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    tu = torch.randn(N_USERS, 4, generator=g)
    ti = torch.randn(N_ITEMS, 4, generator=g)
    wc = torch.randn(N_CTX, generator=g)

    def sample(n):
        uid = torch.randint(0, N_USERS, (n,), generator=g)
        iid = torch.randint(0, N_ITEMS, (n,), generator=g)
        ctx = torch.randn(n, N_CTX, generator=g)
        logit = 1.5 * (tu[uid] * ti[iid]).sum(1) + 1.5 * ctx @ wc - 1.0
        click = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
        watch_s = torch.exp(torch.randn(n, generator=g) * 0.6 + 4.8).clamp(max=1800.0)
        return uid, iid, ctx, click, watch_s

    steps, bs, bad_step = 200, 512, 6
    batches = []
    for s in range(steps):
        uid, iid, ctx, click, watch = sample(bs)
        if s == bad_step:
            watch = watch * 1000.0                 # partition logged in milliseconds
        if fixed:
            watch = watch.clamp(max=CAP_S)
        weight = torch.where(click > 0, watch / SCALE_S, torch.ones_like(watch))
        batches.append(((uid, iid, ctx), (click, weight)))
    model = Ranker()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    return dict(model=model, optimizer=opt, loss_fn=weighted_logloss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
