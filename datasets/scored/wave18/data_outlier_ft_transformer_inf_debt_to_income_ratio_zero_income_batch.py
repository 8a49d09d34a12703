"""FT-Transformer credit-default model hit by one batch with an infinite ratio feature.

Mechanism: an FT-Transformer (Gorishniy et al. 2021) tokenises every numerical feature as
x_j * W_j + b_j, adds categorical embeddings and a [CLS] token, and runs pre-norm Transformer
blocks; the [CLS] head predicts default with BCE.  The feature pipeline computes
debt_to_income = debt / income and z-scores it with statistics from a clean sample.  One
late partition contains applicants with income == 0 (students / unreported), so their ratio
is +inf.  The batch that contains them sends an inf token into the first LayerNorm, which
returns NaN, and the loss is NaN at that step (the step differs per seed).  Before it the
run trains normally.

ORIGIN is None: the fault is in the data (one corrupt batch), not in any module.

Fix: the zero-income rows get a clipped ratio (the value used for the 99.9th percentile),
i.e. the corrupt rows are repaired; every other batch is identical.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("FT-Transformer (Gorishniy et al., NeurIPS 2021, rtdl) on a credit table with a "
          "ratio feature divided by zero income; the classic 'one inf row -> NaN loss' data "
          "bug seen in tabular DL forums.")


class NumericalTokenizer(nn.Module):
    def __init__(self, n_num, d):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_num, d) / d ** 0.5)
        self.bias = nn.Parameter(torch.randn(n_num, d) / d ** 0.5)

    def forward(self, x):                       # (B, n_num) -> (B, n_num, d)
        return x.unsqueeze(-1) * self.weight + self.bias


class FTTransformer(nn.Module):
    def __init__(self, n_num, cards, d, n_blocks, n_heads):
        super().__init__()
        self.num_tok = NumericalTokenizer(n_num, d)
        self.cat_emb = nn.Embedding(sum(cards), d)
        self.register_buffer("cat_off", torch.cumsum(torch.tensor([0] + cards[:-1]), 0))
        self.cls = nn.Parameter(torch.randn(1, 1, d) / d ** 0.5)
        layer = nn.TransformerEncoderLayer(d, n_heads, dim_feedforward=2 * d, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, n_blocks, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, x_num, x_cat):
        tok = torch.cat([self.cls.expand(len(x_num), -1, -1), self.num_tok(x_num),
                         self.cat_emb(x_cat + self.cat_off)], dim=1)
        return self.head(self.blocks(tok)[:, 0]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    d = [32, 48, 24][seed]
    n_blocks = [2, 3, 2][seed]
    n_heads = [4, 4, 2][seed]
    bs = [128, 96, 160][seed]
    steps = [120, 140, 110][seed]
    bad_step = [63, 88, 41][seed]
    cards = [4, 7, 12]

    n = bs * steps
    income = torch.exp(10.6 + 0.6 * torch.randn(n, generator=g))
    debt = income * torch.rand(n, generator=g) * 0.9
    age = 20 + 50 * torch.rand(n, generator=g)
    util = torch.rand(n, generator=g)
    late = torch.poisson(torch.full((n,), 0.7), generator=g)
    cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in cards], 1)
    # a partition of unreported incomes lands in one batch
    rows = bad_step * bs + torch.randperm(bs, generator=g)[:3]
    income[rows] = 0.0
    dti = debt / income                                    # +inf for the zero-income rows
    if fixed:
        dti = torch.clamp(dti, max=torch.quantile(dti[torch.isfinite(dti)], 0.999).item())
    risk = (2.5 * (dti.clamp(max=1.0) - 0.45) + 1.5 * (util - 0.5) + 0.6 * late
            - 0.03 * (age - 45) + torch.tensor([0.0, 0.5, -0.5, 1.0])[cat[:, 0]] - 0.4)
    y = (torch.rand(n, generator=g) < torch.sigmoid(2.0 * risk)).float()

    raw = torch.stack([torch.log(income.clamp_min(1.0)), dti, age, util, late], 1)
    clean = torch.isfinite(raw).all(1)
    mu, sd = raw[clean][:2000].mean(0), raw[clean][:2000].std(0)
    x_num = (raw - mu) / sd
    batches = [((x_num[i * bs:(i + 1) * bs], cat[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs])
               for i in range(steps)]

    model = FTTransformer(x_num.shape[1], cards, d, n_blocks, n_heads)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-5)
    loss_fn = nn.BCEWithLogitsLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
