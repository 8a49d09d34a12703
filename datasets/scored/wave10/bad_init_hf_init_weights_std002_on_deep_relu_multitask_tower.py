"""A feature-store fed multi-task tower (dense features + two hashed categorical ids -> a
six-layer ReLU MLP -> dict of heads {"click": logit, "dwell": regression}) is built inside a
codebase whose shared `_init_weights` helper was copied from a Hugging Face transformer: every
nn.Linear and nn.Embedding gets normal_(std=initializer_range=0.02) and zero bias. In a
transformer that std is harmless because residual connections and LayerNorm keep the scale, but
this tower is a plain, norm-free stack of 64-wide ReLU layers: each layer multiplies the
activation scale by about 0.02*sqrt(64/2) ~ 0.11, so after six layers the heads see inputs ~1e-6
of the features' scale. The heads can only learn their biases (the targets are balanced /
centred, so that buys nothing), the lower layers' gradients are the product of the same tiny
factors, and SGD never gets out: the loss sits at its chance value from step 0, silently, with no
NaN. Fixed: Kaiming (fan_in, relu) init for the tower, the PyTorch-recommended init for ReLU MLPs.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "tower.0"
SOURCE = ("Hugging Face PreTrainedModel._init_weights pattern (normal_(std=config.initializer_range=0.02)) "
          "reused for a non-residual, norm-free ReLU ranking tower; He et al. 2015 on variance-preserving init")

N_DENSE, N_BUCKETS, EMB, WIDTH, DEPTH = 16, 500, 8, 64, 6


class MultiTaskTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_emb = nn.Embedding(N_BUCKETS, EMB)
        self.item_emb = nn.Embedding(N_BUCKETS, EMB)
        layers, d = [], N_DENSE + 2 * EMB
        for _ in range(DEPTH):
            layers += [nn.Linear(d, WIDTH), nn.ReLU()]
            d = WIDTH
        self.tower = nn.Sequential(*layers)
        self.heads = nn.ModuleDict({"click": nn.Linear(WIDTH, 1), "dwell": nn.Linear(WIDTH, 1)})

    def forward(self, dense, user_id, item_id):
        h = torch.cat([dense, self.user_emb(user_id), self.item_emb(item_id)], dim=-1)
        h = self.tower(h)
        return {k: head(h).squeeze(-1) for k, head in self.heads.items()}


def hf_init_weights(module, std=0.02):
    # copied from a transformer codebase's _init_weights
    if isinstance(module, nn.Linear):
        module.weight.data.normal_(mean=0.0, std=std)
        if module.bias is not None:
            module.bias.data.zero_()
    elif isinstance(module, nn.Embedding):
        module.weight.data.normal_(mean=0.0, std=std)


def kaiming_init(module):
    if isinstance(module, nn.Linear):
        nn.init.kaiming_normal_(module.weight, mode="fan_in", nonlinearity="relu")
        nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, std=1.0)


def loss_fn(out, y):
    return (F.binary_cross_entropy_with_logits(out["click"], y["click"])
            + F.mse_loss(out["dwell"], y["dwell"]))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MultiTaskTower()
    model.apply(kaiming_init if fixed else hf_init_weights)
    # "feature store" ground truth: a hidden interaction of dense features and id factors
    w_dense = torch.randn(N_DENSE, 1, generator=g) / math.sqrt(N_DENSE)
    u_fac = torch.randn(N_BUCKETS, generator=g)
    i_fac = torch.randn(N_BUCKETS, generator=g)
    steps, bs = 150, 64
    batches = []
    for _ in range(steps):
        dense = torch.randn(bs, N_DENSE, generator=g)
        uid = torch.randint(0, N_BUCKETS, (bs,), generator=g)
        iid = torch.randint(0, N_BUCKETS, (bs,), generator=g)
        score = (dense @ w_dense).squeeze(-1) + 0.8 * u_fac[uid] * i_fac[iid] + 0.5 * torch.tanh(dense[:, 0] * dense[:, 1])
        click = (score + 0.3 * torch.randn(bs, generator=g) > 0).float()
        dwell = score - score.mean() + 0.2 * torch.randn(bs, generator=g)
        batches.append(((dense, uid, iid), {"click": click, "dwell": dwell}))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
