"""Syndromic-surveillance nowcaster: small Transformer encoder over weekly ED chief-complaint signals (Adam, MSE).

Mechanism: each sample is 12 weeks of five syndromic signals for one facility (percent of ED
visits for COVID-like, influenza-like, RSV-like illness, total-visit index, percent positivity);
the target is next week's percent CLI, standardised with training-set statistics. In one early
batch, the rows from one facility feed carry the raw CLI visit *count* in the target column
instead of the percentage (a schema mix-up known from NSSP/ESSENCE feeds), so the standardised
target is ~1e4-1e5. The loss of that batch is ~1e9 and the gradient of every parameter that the
affected rows touch is 1e4-1e5 times normal (the GELU feed-forward has no
zero-gradient units, so nearly every element is hit). Adam's first moment keeps pushing the
weights in the outlier's direction for a few dozen steps (the loss rises), while its
second-moment estimate v has absorbed g^2 ~1e8-1e10 times the usual value; with beta2 = 0.999
it needs thousands of steps to decay, so every later update is shrunk by orders of magnitude
and the model cannot recover: the loss stays above its early level, no inf/NaN. The corrupt batch
arrives at a seed-dependent early step.

ORIGIN: None: the corruption is in the targets, so no single module starts it; it enters
through the loss and poisons the optimiser state of all parameters at once.

Fix: filter the batch: rows whose standardised target exceeds |z| > 10 are dropped from their
batch (a standard QC rule for percentages), the rest of the run unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("CDC NSSP/ESSENCE data-quality notes on facility feeds (count vs percent fields); "
          "known Adam failure: one huge-gradient batch inflates the second moment and freezes training")


class SyndromicTransformer(nn.Module):
    def __init__(self, n_sig, d, heads, layers, T):
        super().__init__()
        self.embed = nn.Linear(n_sig, d)
        self.pos = nn.Parameter(torch.randn(1, T, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        h = self.encoder(self.embed(x) + self.pos)
        return self.head(h[:, -1]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [32, 48, 32][seed % 3]
    heads = [4, 4, 2][seed % 3]
    layers = [2, 1, 3][seed % 3]
    lr = [2e-3, 3e-3, 1.5e-3][seed % 3]
    bs = [32, 48, 40][seed % 3]
    bad_step = [2, 4, 3][seed % 3]
    steps = 120
    T = 12
    N = steps * bs
    t = torch.arange(T + 1).float()
    phase = torch.rand(N, 1, generator=g) * 2 * torch.pi
    amp = 1.0 + torch.rand(N, 1, generator=g) * 3.0
    cli = 2.0 + amp * (1 + torch.sin(2 * torch.pi * t / 20 + phase)) + 0.2 * torch.randn(N, T + 1, generator=g)
    ili = 0.6 * cli + 0.5 * torch.randn(N, 1, generator=g) + 0.2 * torch.randn(N, T + 1, generator=g)
    rsv = 1.0 + 0.5 * torch.cos(2 * torch.pi * t / 20 + phase) + 0.2 * torch.randn(N, T + 1, generator=g)
    visits = 1.0 + 0.1 * torch.randn(N, T + 1, generator=g)
    posit = 0.05 * cli + 0.02 * torch.randn(N, T + 1, generator=g)
    S = torch.stack([cli, ili, rsv, visits, posit], -1)
    X = S[:, :T]
    X = (X - X.mean((0, 1))) / X.std((0, 1))
    y_pct = cli[:, T].clone()
    mu, sd = y_pct.mean(), y_pct.std()
    # one facility feed puts the raw CLI visit count into the percent column
    n_bad = [bs // 4, bs // 3, bs // 4][seed % 3]
    rows = torch.arange(bad_step * bs, bad_step * bs + n_bad)
    y_pct[rows] = torch.randint(20000, 200000, (n_bad,), generator=g).float()
    Y = (y_pct - mu) / sd
    keep = torch.ones(N, dtype=torch.bool)
    if fixed:
        keep = Y.abs() <= 10.0

    model = SyndromicTransformer(5, d, heads, layers, T)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    batches = []
    for i in range(steps):
        k = keep[i * bs:(i + 1) * bs]
        batches.append((X[i * bs:(i + 1) * bs][k], Y[i * bs:(i + 1) * bs][k]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
