"""BPR matrix factorisation (Rendle et al. 2009) for implicit-feedback recommendation with
nn.Embedding(sparse=True) tables and Adagrad, as in classic large-catalogue recommenders. Each
step touches only the users and items of the current batch, so most embedding rows get no
gradient on a given step and the gradients are sparse tensors; Adagrad's per-row accumulators
make the effective step of rarely-seen rows much larger than that of popular rows. The loss
-log sigmoid(s_pos - s_neg) starts at log 2 and decreases steadily. Nothing is wrong. Healthy run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Rendle et al. 2009 BPR; sparse embedding gradients with torch.optim.Adagrad"


class BPRMF(nn.Module):
    def __init__(self, n_users, n_items, d=32):
        super().__init__()
        self.user = nn.Embedding(n_users, d, sparse=True)
        self.item = nn.Embedding(n_items, d, sparse=True)
        nn.init.normal_(self.user.weight, std=0.1)
        nn.init.normal_(self.item.weight, std=0.1)

    def forward(self, u, i_pos, i_neg):
        eu = self.user(u)
        return (eu * self.item(i_pos)).sum(-1) - (eu * self.item(i_neg)).sum(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_users, n_items, k = 500, 800, 6
    pu = torch.randn(n_users, k, generator=g); qi = torch.randn(n_items, k, generator=g)
    batches = []
    for _ in range(200):
        u = torch.randint(0, n_users, (512,), generator=g)
        cand = torch.randint(0, n_items, (512, 20), generator=g)
        score = (pu[u][:, None] * qi[cand]).sum(-1)
        i_pos = cand.gather(1, score.argmax(1, keepdim=True)).squeeze(1)
        i_neg = torch.randint(0, n_items, (512,), generator=g)
        batches.append(((u, i_pos, i_neg), torch.ones(512)))
    model = BPRMF(n_users, n_items)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    return dict(model=model, optimizer=opt, loss_fn=lambda diff, _y: -F.logsigmoid(diff).mean(),
                batches=batches, steps=200, amp_dtype=None, scaler=None)
