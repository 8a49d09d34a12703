"""Latent neural process (Garnelo et al. 2018) for 1-D function regression: a deterministic-free
latent path where an MLP encoder embeds every (x, y) context pair, the embeddings are mean-pooled
and mapped to the mean and log-variance of q(z | context); a decoder MLP maps (x_target, z) to the
predictive mean and log-variance.  Trained on the NP ELBO: Gaussian NLL of the targets +
KL(q(z | context+targets) || q(z | context)), amortised inference over tasks.

Mechanism: the user 're-initialised' all Linears with `nn.init.normal_(m.weight)` - the default
std is 1.0, not a fan-in-scaled value.  Each ReLU layer of width 64-128 multiplies the activation
scale by ~sqrt(fan_in/2) = 6-8, so the pooled representation is ~1e3 x too large and the latent
log-variance / decoder log-variance heads produce values in the hundreds-thousands at step 0:
exp() overflows and the loss is inf/NaN from the very first steps.
ORIGIN: encoder.0 - the first of the badly initialised Linears (the growth starts there).
Fix: xavier/kaiming-scaled init (here: kaiming_uniform as PyTorch's default) - the only change."""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "encoder.0"
SOURCE = "Garnelo et al. 2018 neural processes; nn.init.normal_ default std=1 on every Linear (common forum mistake)"


class LatentNP(nn.Module):
    def __init__(self, width, z_dim, depth):
        super().__init__()
        enc, d = [], 2
        for _ in range(depth):
            enc += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.encoder = nn.Sequential(*enc)
        self.latent = nn.Linear(width, 2 * z_dim)
        dec, d = [], 1 + z_dim
        for _ in range(depth):
            dec += [nn.Linear(d, width), nn.ReLU()]
            d = width
        dec.append(nn.Linear(width, 2))
        self.decoder = nn.Sequential(*dec)

    def q_z(self, x, y):
        r = self.encoder(torch.cat([x, y], -1)).mean(1)
        mu, log_var = self.latent(r).chunk(2, -1)
        return mu, log_var

    def forward(self, xc, yc, xt, yt):
        mu_c, lv_c = self.q_z(xc, yc)
        mu_a, lv_a = self.q_z(torch.cat([xc, xt], 1), torch.cat([yc, yt], 1))
        z = mu_a + (0.5 * lv_a).exp() * torch.randn_like(mu_a)
        h = torch.cat([xt, z[:, None, :].expand(-1, xt.shape[1], -1)], -1)
        mean, log_var = self.decoder(h).chunk(2, -1)
        return mean, log_var, mu_a, lv_a, mu_c, lv_c


def np_elbo_loss(out, yt):
    mean, log_var, mu_a, lv_a, mu_c, lv_c = out
    nll = 0.5 * (math.log(2 * math.pi) + log_var + (yt - mean) ** 2 / log_var.exp()).sum((1, 2))
    kl = 0.5 * (lv_c - lv_a + (lv_a.exp() + (mu_a - mu_c) ** 2) / lv_c.exp() - 1).sum(-1)
    return (nll + kl).mean() / yt.shape[1]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    depth = [3, 2, 3][seed % 3]
    z_dim = [16, 8, 32][seed % 3]
    tasks = [16, 8, 12][seed % 3]
    lr = [5e-3, 4e-3, 5e-3][seed % 3]
    steps = 160
    model = LatentNP(width, z_dim, depth)
    if not fixed:
        for mod in model.modules():
            if isinstance(mod, nn.Linear):
                nn.init.normal_(mod.weight)
                nn.init.zeros_(mod.bias)
    batches = []
    for _ in range(steps):
        amp = 0.5 + 1.5 * torch.rand(tasks, 1, 1, generator=g)
        phase = 3.14 * torch.rand(tasks, 1, 1, generator=g)
        x = 4 * torch.rand(tasks, 30, 1, generator=g) - 2
        y = amp * torch.sin(2 * x + phase) + 0.05 * torch.randn(tasks, 30, 1, generator=g)
        nc = 10
        batches.append(((x[:, :nc], y[:, :nc], x[:, nc:], y[:, nc:]), y[:, nc:]))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=np_elbo_loss, batches=batches, steps=steps)
