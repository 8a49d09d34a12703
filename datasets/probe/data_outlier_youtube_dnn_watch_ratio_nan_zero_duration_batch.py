"""YouTube-DNN candidate generator (Covington et al. 2016): mean-pooled watch-history embeddings +
dense user features (age, watch_ratio = watched_seconds / video_duration, log activity) -> ReLU tower
-> softmax over the item catalogue. One export shard contains videos with duration 0 (live
streams), so watch_ratio = 0/0 = NaN for some users of one batch. The NaN goes through the first
tower layer into the logits and the cross-entropy is NaN at that step; Adam then writes NaN into
every weight.
ORIGIN: None (corrupt input rows). Fix: drop the rows with non-finite dense features."""
import torch, torch.nn as nn
CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "YouTube DNN / two-stage recsys reimplementations; zero-duration videos giving NaN watch ratio"
class YTDNN(nn.Module):
    def __init__(s, n, k, nd, h):
        super().__init__()
        s.emb = nn.EmbeddingBag(n, k, mode="mean")
        s.tower = nn.Sequential(nn.Linear(k + nd, h), nn.ReLU(), nn.Linear(h, k), nn.ReLU())
        s.out = nn.Linear(k, n)
    def forward(s, hist, dense): return s.out(s.tower(torch.cat([s.emb(hist), dense], 1)))
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    n, k, h, L, bs, steps, bad = [(200, 16, 64, 8, 64, 80, 30), (300, 24, 96, 12, 32, 100, 55), (150, 32, 48, 6, 128, 70, 12)][seed]
    model = YTDNN(n, k, 3, h)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = []
    for i in range(steps):
        c = torch.randint(0, 10, (bs,), generator=g)
        hist = (c[:, None] * (n // 10) + torch.randint(0, n // 10, (bs, L), generator=g)) % n
        tgt = (c * (n // 10) + torch.randint(0, 5, (bs,), generator=g)) % n
        dense = torch.randn(bs, 3, generator=g)
        if i == bad and not fixed:
            dense[torch.randperm(bs, generator=g)[:3], 1] = float("nan")
        batches.append(((hist, dense), tgt))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
