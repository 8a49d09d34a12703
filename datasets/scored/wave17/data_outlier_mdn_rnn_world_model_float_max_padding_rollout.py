"""World-Models MDN-RNN: an LSTM over VAE latents (plus action) predicting the next latent as a
mixture of diagonal Gaussians, NLL via logsumexp, Adam.

Mechanism: rollouts are stored in a pre-allocated buffer whose unused tail is filled with
torch.finfo(float32).max as a "missing" marker; one crashed episode was never trimmed, so a
mid-run batch contains rows whose targets are 3.4e38. (y - mu)^2 overflows to inf, the mixture
log-likelihood is -inf, the loss is inf and backward produces NaN gradients that Adam writes into
every weight; all later losses are NaN. ORIGIN None: the data is at fault, not a module.
Fix: filter the rollouts containing the sentinel out of that batch.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "World Models (Ha & Schmidhuber) MDN-RNN re-implementations; untrimmed padded rollout buffers with sentinel values produce inf/NaN MDN loss"


class MDNRNN(nn.Module):
    def __init__(self, z, a, hidden, k):
        super().__init__()
        self.z, self.k = z, k
        self.rnn = nn.LSTM(z + a, hidden, batch_first=True)
        self.mdn = nn.Linear(hidden, k * (2 * z + 1))

    def forward(self, x):
        h, _ = self.rnn(x)
        p = self.mdn(h)
        B, T, _ = p.shape
        logit_pi = p[..., : self.k]
        mu = p[..., self.k: self.k + self.k * self.z].view(B, T, self.k, self.z)
        log_sigma = p[..., self.k + self.k * self.z:].view(B, T, self.k, self.z).clamp(-5, 5)
        return logit_pi, mu, log_sigma


def mdn_loss(out, y):
    logit_pi, mu, log_sigma = out
    y = y.unsqueeze(2)
    lp = -0.5 * ((y - mu) / log_sigma.exp()) ** 2 - log_sigma - 0.5 * math.log(2 * math.pi)
    lp = lp.sum(-1) + torch.log_softmax(logit_pi, -1)
    return -torch.logsumexp(lp, -1).mean()


def _rollouts(g, n, T, z, a, W):
    act = torch.randn(n, T, a, generator=g)
    lat = torch.zeros(n, T + 1, z)
    lat[:, 0] = torch.randn(n, z, generator=g)
    for t in range(T):
        lat[:, t + 1] = torch.tanh(lat[:, t] @ W[:z] + act[:, t] @ W[z:]) + 0.05 * torch.randn(n, z, generator=g)
    return torch.cat([lat[:, :-1], act], -1), lat[:, 1:]


def build(seed, fixed=False):
    cfg = [dict(h=64, k=3, lr=2e-3, bs=16, T=12, bad=60), dict(h=48, k=5, lr=1e-3, bs=24, T=10, bad=85), dict(h=96, k=2, lr=3e-3, bs=8, T=16, bad=30)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    z, a = 6, 2
    W = torch.randn(z + a, z, generator=g) * 0.8
    model = MDNRNN(z, a, cfg["h"], cfg["k"])
    steps = 110
    batches = []
    for i in range(steps):
        x, y = _rollouts(g, cfg["bs"], cfg["T"], z, a, W)
        if i == cfg["bad"]:
            big = torch.finfo(torch.float32).max
            x[:2, cfg["T"] // 2:, :z] = big
            y[:2, cfg["T"] // 2 - 1:] = big
            if fixed:
                keep = (y.abs() < 1e30).flatten(1).all(1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=mdn_loss, batches=batches, steps=steps)
