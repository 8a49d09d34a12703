"""Neural mixed logit for multiparty vote choice (spatial-voting data, individual-level
taste heterogeneity) with every Linear of the taste network drawn from N(0, 0.01^2).

Setting. Each respondent i chooses one of J parties. Party j has attributes x_j (left-right
position, EU position, incumbency, leader evaluation gap ...). The respondent-specific taste
vector beta_i = g(z_i) is produced by a deep tanh MLP of respondent covariates z_i (a "neural
mixed logit" / taste network, as in Han, Pereira, Ben-Akiva & Zegras 2022), and the utility is
U_ij = x_ij . beta_i; loss is the multinomial logit log-likelihood (cross-entropy). Because
spatial tastes are horizontal (left voters like left parties, right voters like right parties)
the population-average taste is close to zero, so a homogeneous conditional logit explains
almost nothing: everything has to come through the respondent covariates.

Mechanism (bad_init). The script copies the Caffe-era `weight_filler: gaussian std 0.01` to
every Linear of the taste network. With width w, each tanh layer multiplies the signal scale by
about 0.01*sqrt(w) (0.06-0.1), so after 4-6 layers the covariate signal reaching beta is ~1e-6
of its input scale, and the back-propagated gradient to early layers shrinks by the same factor.
All respondents get the same (≈ bias-only) tastes, which cannot fit horizontal preferences; the
loss sits at ≈ log J from step 0 and plain SGD never escapes.

ORIGIN = "taste.0": the first Linear of the taste network, where the geometric shrinkage
starts (each later layer multiplies it again); every layer is initialised the same way but
the signal is lost from the first one on.

Fix: Xavier/Glorot-normal initialisation with the tanh gain (nn.init.calculate_gain('tanh')),
zero biases. Data, architecture, optimiser, learning rate and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "taste.0"
SOURCE = ("Caffe `gaussian std: 0.01` weight filler reused in deep nets (Glorot & Bengio 2010; "
          "He et al. 2015 on vanishing signal with fixed small std); neural mixed logit / taste "
          "networks for discrete choice (Han et al. 2022, TasteNet-MNL)")


class TasteNetMNL(nn.Module):
    def __init__(self, d_z, k_attr, width, depth):
        super().__init__()
        layers, d = [], d_z
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, k_attr))
        self.taste = nn.Sequential(*layers)

    def forward(self, z, x):
        beta = self.taste(z)                       # (B, K) respondent tastes
        return torch.einsum("bjk,bk->bj", x, beta)  # (B, J) utilities


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [4, 5, 6][seed % 3]
    width = [48, 64, 96][seed % 3]
    lr = [0.3, 0.2, 0.25][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = 200
    J, K, Dz = 6, 5, 8

    model = TasteNetMNL(Dz, K, width, depth)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.xavier_normal_(m.weight, gain=nn.init.calculate_gain("tanh"))
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)

    # true heterogeneous tastes: horizontal (mean ~0 over the population)
    A = torch.randn(Dz, K, generator=g) / Dz ** 0.5
    def sample(n):
        z = torch.randn(n, Dz, generator=g)
        beta = 2.5 * torch.tanh(1.5 * z @ A)
        x = torch.randn(n, J, K, generator=g)
        u = torch.einsum("bjk,bk->bj", x, beta)
        gumbel = -torch.log(-torch.log(torch.rand(n, J, generator=g).clamp_min(1e-9)))
        y = (u + gumbel).argmax(1)
        return (z, x), y

    batches = [sample(bs) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
