"""Biased matrix factorisation (Funk-SVD with user/item biases) for explicit 1-5 star ratings on a
dense 60-user x 40-item slice, trained with plain SGD on a squared error summed over a batch of 512
ratings. The learning rate 0.05 was copied from a per-rating Funk-SVD script; with the summed loss
each user/item bias and factor row receives the sum of its 10-13 ratings' gradients per step, so
the step is ~10x past the stability limit: the biases overshoot back and forth with growing
amplitude, the factor dot products then grow multiplicatively, and the loss runs to inf and NaN
within a few dozen steps. The fixed run only lowers the learning rate to 0.005."""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Funk-SVD / Surprise SVD defaults (lr_all=0.005-0.05 per rating) reused in a PyTorch "
          "mini-batch MF with reduction='sum'; common 'MF loss becomes nan' forum reports")


class BiasedMF(nn.Module):
    def __init__(self, n_users, n_items, k, global_mean):
        super().__init__()
        self.user_factors = nn.Embedding(n_users, k)
        self.item_factors = nn.Embedding(n_items, k)
        self.user_bias = nn.Embedding(n_users, 1)
        self.item_bias = nn.Embedding(n_items, 1)
        nn.init.normal_(self.user_factors.weight, std=0.1)
        nn.init.normal_(self.item_factors.weight, std=0.1)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)
        self.register_buffer("mu", torch.tensor(float(global_mean)))

    def forward(self, users, items):
        dot = (self.user_factors(users) * self.item_factors(items)).sum(-1)
        return self.mu + self.user_bias(users).squeeze(-1) + self.item_bias(items).squeeze(-1) + dot


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_users, n_items, k, true_k = 60, 40, 16, 4
    pu = torch.randn(n_users, true_k, generator=g) * 0.6
    qi = torch.randn(n_items, true_k, generator=g) * 0.6
    bu = torch.randn(n_users, generator=g) * 0.3
    bi = torch.randn(n_items, generator=g) * 0.4
    batches, all_r = [], []
    for _ in range(40):
        u = torch.randint(0, n_users, (512,), generator=g)
        i = torch.randint(0, n_items, (512,), generator=g)
        r = 3.5 + bu[u] + bi[i] + (pu[u] * qi[i]).sum(-1) + 0.3 * torch.randn(512, generator=g)
        r = r.round().clamp(1, 5)
        batches.append(((u, i), r))
        all_r.append(r)
    mean = torch.cat(all_r).mean().item()
    model = BiasedMF(n_users, n_items, k, mean)
    lr = 0.005 if fixed else 0.05
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def loss_fn(pred, r):
        return ((pred - r) ** 2).sum()

    steps = 200
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
