"""YouTube-DNN style candidate generator (Covington et al. 2016): the watch history is mean-pooled
with an ``EmbeddingBag``, concatenated with a few standardised user features, passed through a
4-layer ReLU tower and scored against all items with a full softmax.  The team's custom
``reset_parameters`` meant to reproduce LeCun-uniform, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), but the
bound was typed as ``1.0 / fan_in``: every tower layer is ~8x too small, so the user vector shrinks
geometrically through the tower (about 1e-5 of the input scale at the top) and the item logits
are all ~0 from step 0.  Only the output bias receives a usable gradient; the item catalogue is
balanced, so the bias can do nothing and the cross-entropy sits at ~log(n_items) for the whole
run without any NaN.  The fix restores the sqrt in the bound."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "tower.0"
SOURCE = ("Covington, Adams, Sargin 'Deep Neural Networks for YouTube Recommendations' (RecSys 2016); "
          "LeCun-uniform init typo (bound 1/fan_in instead of 1/sqrt(fan_in)) in a custom reset_parameters")

N_ITEMS, EMB, N_DENSE, HID, N_CLUSTERS, HIST = 200, 32, 4, 64, 10, 10


class CandidateTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = nn.EmbeddingBag(N_ITEMS, EMB, mode="mean")
        self.tower = nn.Sequential(
            nn.Linear(EMB + N_DENSE, HID), nn.ReLU(),
            nn.Linear(HID, HID), nn.ReLU(),
            nn.Linear(HID, HID), nn.ReLU(),
            nn.Linear(HID, EMB),
        )
        self.softmax = nn.Linear(EMB, N_ITEMS)

    def forward(self, hist_ids, dense):
        u = torch.cat([self.history(hist_ids), dense], dim=1)
        return self.softmax(self.tower(u))


def lecun_uniform_(model, fixed):
    for m in model.modules():
        if isinstance(m, nn.Linear):
            fan_in = m.weight.shape[1]
            bound = 1.0 / math.sqrt(fan_in) if fixed else 1.0 / fan_in
            nn.init.uniform_(m.weight, -bound, bound)
            nn.init.zeros_(m.bias)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CandidateTower()
    lecun_uniform_(model, fixed)

    # each user belongs to a taste cluster; clusters own disjoint, equally sized item sets
    per = N_ITEMS // N_CLUSTERS
    cluster_dense = torch.randn(N_CLUSTERS, N_DENSE, generator=g)

    def sample(n):
        c = torch.randint(0, N_CLUSTERS, (n,), generator=g)
        hist = c[:, None] * per + torch.randint(0, per, (n, HIST), generator=g)
        noise = torch.rand(n, HIST, generator=g) < 0.2
        hist = torch.where(noise, torch.randint(0, N_ITEMS, (n, HIST), generator=g), hist)
        nxt = c * per + torch.randint(0, per, (n,), generator=g)
        jump = torch.rand(n, generator=g) < 0.15
        nxt = torch.where(jump, torch.randint(0, N_ITEMS, (n,), generator=g), nxt)
        dense = cluster_dense[c] * 0.5 + torch.randn(n, N_DENSE, generator=g)
        return (hist, dense), nxt

    steps = 200
    batches = [sample(128) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
