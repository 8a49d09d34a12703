"""COMET-style learned MT evaluation metric (Rei et al. 2020 "estimator"), tiny: hypothesis and
reference are embedded and pooled, the feature vector [h; r; h*r; |h-r|] goes through a
feed-forward regressor with Tanh hidden layers onto the human quality score (MSE); SGD with momentum.

Mechanism: the pooling was written as a masked SUM over tokens instead of the masked mean.  With
N(0,1) embeddings (nn.Embedding default) and 16-24 tokens, each pooled coordinate has std ~4-5
and the product/abs features ~20, so the first Tanh's pre-activations have std ~10-30: the hidden
units sit at +-1 from step 0 and their derivative (~1e-8 and smaller) blocks the gradient, while
the few units that are not saturated pass gradients multiplied by the ~20-sized features: the
regressor either cannot move from the mean score or the embeddings are kicked into overflow
(loss flat / blowing up to inf-NaN depending on the seed).
ORIGIN: estimator.1, the first nn.Tanh, which saturates.
Fix: masked mean pooling (pre-activations O(1)); nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "estimator.1"
SOURCE = ("Rei et al. 2020 'COMET: A Neural Framework for MT Evaluation' (estimator with "
          "[h; r; h*r; |h-r|] features, Tanh feed-forward); sum-vs-mean pooling bugs")


class CometLite(nn.Module):
    def __init__(self, V, d, hid, mean_pool):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        self.estimator = nn.Sequential(nn.Linear(4 * d, hid), nn.Tanh(), nn.Linear(hid, hid),
                                       nn.Tanh(), nn.Linear(hid, 1))
        self.mean_pool = mean_pool

    def pool(self, x):
        e = self.emb(x)
        return e.mean(1) if self.mean_pool else e.sum(1)

    def forward(self, hyp, ref):
        h, r = self.pool(hyp), self.pool(ref)
        return self.estimator(torch.cat([h, r, h * r, (h - r).abs()], -1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    d, hid, T, bs, lr = [(16, 32, 16, 16, 0.1), (24, 32, 20, 12, 0.1), (16, 24, 24, 20, 0.1)][seed % 3]
    V = 30
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(19000 + seed)
    model = CometLite(V, d, hid, mean_pool=fixed)
    steps = 80
    batches = []
    for _ in range(steps):
        ref = torch.randint(0, V, (bs, T), generator=g)
        err = torch.rand(bs, 1, generator=g)
        wrong = torch.rand(bs, T, generator=g) < err
        hyp = torch.where(wrong, torch.randint(0, V, (bs, T), generator=g), ref)
        # human score ~ 1 - error rate, centred
        y = 1.0 - 2.0 * (hyp != ref).float().mean(1)
        # the metric sees bags of tokens; shuffle the hypothesis order (pooling is order-free)
        batches.append(((hyp, ref), y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(pred, y):
        return F.mse_loss(pred, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
