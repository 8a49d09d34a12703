"""Healthy Mult-VAE (Liang et al., WWW 2018, "Variational Autoencoders for
Collaborative Filtering"): a user's binary click vector is L2-normalised,
passed through input dropout and a tanh encoder to (mu, logvar); the decoder
returns logits over the whole catalogue and the loss is the multinomial
negative log-likelihood  -sum_i x_ui log softmax(logits)_i  (summed over the
user's clicks, averaged over users) plus beta * KL, with beta annealed
linearly from 0 to 0.2 (the paper's schedule).  Adam.

Why it looks alarming but is fine:
  * the loss is in the hundreds and jumps from batch to batch: it is a SUM
    over each user's clicks, and a batch with a few heavy users (150+ clicks)
    has a much larger loss than one with light users;
  * the KL term is switched on gradually, so part of the objective grows
    while the reconstruction improves, and the KL/latent statistics move a lot
    early on;
  * the reparameterisation noise and 50% input dropout make the curve ragged.
The per-click NLL still falls steadily from log(n_items) and the run converges.

ORIGIN is None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Mult-VAE (Liang, Krishnan, Hoffman, Jebara, WWW'18) reference training "
          "recipe: summed multinomial likelihood, KL annealing to beta=0.2, input dropout 0.5")


class MultVAE(nn.Module):
    def __init__(self, n_items, hidden, latent):
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.enc = nn.Linear(n_items, hidden)
        self.enc_out = nn.Linear(hidden, 2 * latent)
        self.dec = nn.Linear(latent, hidden)
        self.dec_out = nn.Linear(hidden, n_items)
        self.latent = latent

    def forward(self, x):
        h = F.normalize(x, dim=1)
        h = torch.tanh(self.enc(self.drop(h)))
        stats = self.enc_out(h)
        mu, logvar = stats[:, : self.latent], stats[:, self.latent:]
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar) if self.training else mu
        logits = self.dec_out(torch.tanh(self.dec(z)))
        return logits, mu, logvar


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(items=800, hidden=300, latent=64, bs=192, lr=2e-3, steps=200, anneal=120),
        dict(items=600, hidden=200, latent=32, bs=160, lr=3e-3, steps=200, anneal=80),
        dict(items=900, hidden=400, latent=100, bs=224, lr=2e-3, steps=180, anneal=180),
    ][seed % 3]
    g = torch.Generator().manual_seed(2718 + seed)
    n_users, n_items = 2500, cfg["items"]
    u = torch.randn(n_users, 5, generator=g)
    v = torch.randn(n_items, 5, generator=g)
    pop = torch.randn(n_items, generator=g) * 0.8
    activity = torch.exp(torch.randn(n_users, generator=g) * 0.6) * 25    # heavy-tailed user activity
    probs = torch.softmax(u @ v.T * 3.0 + pop, dim=1)
    clicks = torch.zeros(n_users, n_items)
    for r in range(n_users):
        k = int(activity[r].clamp(5, n_items // 2))
        clicks[r, torch.multinomial(probs[r], k, replacement=False, generator=g)] = 1.0

    torch.manual_seed(seed)
    model = MultVAE(n_items, cfg["hidden"], cfg["latent"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    state = {"step": 0}

    def loss_fn(out, x):
        logits, mu, logvar = out
        beta = min(0.2, 0.2 * state["step"] / cfg["anneal"])
        state["step"] += 1
        nll = -(F.log_softmax(logits, dim=1) * x).sum(1).mean()
        kl = (-0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1)).mean()
        return nll + beta * kl

    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n_users, (cfg["bs"],), generator=g)
        batches.append((clicks[idx], clicks[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
