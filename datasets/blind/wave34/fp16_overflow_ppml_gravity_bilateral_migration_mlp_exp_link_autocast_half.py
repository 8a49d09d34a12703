"""Structural-gravity model of bilateral migration flows estimated by Poisson pseudo-maximum
likelihood (PPML, Santos Silva & Tenreyro 2006) with a neural index: origin and destination
embeddings (multilateral-resistance / fixed-effect terms) plus standardised dyadic covariates
(log distance, contiguity, common language, colonial tie, log GDP per capita ratio) -> MLP ->
eta; mu = exp(eta); hand-written half Poisson deviance mean(mu - y*eta + y log y - y). Mixed
precision with torch.autocast(float16) to speed up the big dyad batches; Adam.

Mechanism (fp16_overflow). Flows are counts of migrants (median ~1e4, large corridors ~1e6),
so the output bias is initialised, as PPML practitioners do, at log(mean flow) ~ 10-11 and eta
for the big corridors reaches 12-14 as the model learns. Under autocast the MLP output is
float16, and `torch.exp` of a float16 tensor stays float16: exp(eta) overflows 65504 as soon as
eta > 11.09. mu becomes inf for the largest corridors in the first batch that contains one
above that level (at step 0 for some seeds, after a few steps for others) and the loss is inf. There is no GradScaler (it would not help: the
overflow is in the forward pass, not in the gradients).

ORIGIN = "index.4": the last Linear of the index MLP, whose float16 output eta is exponentiated;
the value that overflows (mu) is computed from it in the loss.

Fix: compute the exponential link and the loss in float32 (`eta.float()`), the standard
'keep exp/log-sum in fp32' rule for autocast. Same model, autocast, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "index.4"
SOURCE = ("PPML gravity estimation (Santos Silva & Tenreyro 2006) with exp link; float16 max "
          "65504 => exp overflows for eta > 11.09 (PyTorch AMP docs: ops that should run in "
          "float32; forum threads 'autocast exp returns inf')")


class NeuralGravity(nn.Module):
    def __init__(self, n_countries, d_emb, d_dyad, width):
        super().__init__()
        self.orig = nn.Embedding(n_countries, d_emb)
        self.dest = nn.Embedding(n_countries, d_emb)
        self.index = nn.Sequential(nn.Linear(2 * d_emb + d_dyad, width), nn.ReLU(),
                                   nn.Linear(width, width), nn.ReLU(),
                                   nn.Linear(width, 1))

    def forward(self, o, d, z):
        h = torch.cat([self.orig(o), self.dest(d), z], 1)
        return self.index(h).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 96, 128][seed % 3]
    d_emb = [8, 12, 16][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [256, 192, 320][seed % 3]
    steps = 150
    C, Z = 120, 5

    model = NeuralGravity(C, d_emb, Z, width)
    for e in (model.orig, model.dest):
        nn.init.normal_(e.weight, 0, 0.1)

    push = torch.randn(C, generator=g) * 0.9        # origin push factors
    pull = torch.randn(C, generator=g) * 0.9        # destination pull factors
    beta = torch.tensor([-1.1, 0.6, 0.5, 0.4, 0.3])

    def sample(n):
        o = torch.randint(0, C, (n,), generator=g)
        d = torch.randint(0, C, (n,), generator=g)
        z = torch.randn(n, Z, generator=g)
        eta = 9.0 + push[o] + pull[d] + z @ beta
        y = torch.poisson(torch.exp(eta), generator=g)
        return (o, d, z), y

    batches = [sample(bs) for _ in range(steps)]
    mean_flow = torch.cat([b[1] for b in batches[:5]]).mean()
    with torch.no_grad():
        model.index[4].bias.fill_(math.log(float(mean_flow)))
        model.index[4].weight.mul_(0.1)

    def ppml_loss(eta, y):
        if fixed:
            eta = eta.float()
        mu = torch.exp(eta)
        ylogy = torch.xlogy(y, y)
        return (mu - y * eta + ylogy - y).mean() / 1e3              # half Poisson deviance

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=ppml_loss, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
