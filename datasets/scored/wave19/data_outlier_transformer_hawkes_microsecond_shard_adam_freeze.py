"""Transformer Hawkes Process (Zuo et al., ICML 2020): type embedding + sinusoidal temporal
encoding, causal Transformer encoder, and the THP intensity
lambda_k(t) = softplus(alpha_k (t - t_j)/t_j + w_k . h_j + b_k); the loss is the negative
log-likelihood per event, sum log lambda(t_i) - integral of lambda (midpoint quadrature).
Trained with Adam.

Mechanism: the event log is assembled from several exporters, and one early shard was
written in microseconds instead of seconds. The (t - t_j)/t_j term is scale free, but the
compensator integral grows with the inter-event gaps, so that batch's NLL is ~1e5-1e6x the
usual value and its gradients are ~1e6x larger. Adam's first step is still bounded, but the
second-moment estimate v absorbs g^2 ~ 1e12 times the normal value; with beta2 = 0.999 it
takes thousands of steps to decay, so every later update is divided by a huge sqrt(v); the
only sizeable moves left are the momentum of the outlier gradient itself (pushing all
intensities down). The model is effectively frozen at its early, poor state: for the rest of
the run the loss stays at (or above) its level of the first steps.

ORIGIN: None - one corrupt batch (unit mix-up in the data), no layer is at fault.

Fix: convert that shard to seconds (drop/repair the outlier batch); everything else equal.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Transformer Hawkes Process (Zuo et al. 2020, SimiaoZuo/Transformer-Hawkes-Process); "
          "event logs mixing second and microsecond timestamps, Adam second-moment freeze")


class THP(nn.Module):
    def __init__(self, K, d, layers, heads):
        super().__init__()
        self.d = d
        self.type_emb = nn.Embedding(K, d)
        enc = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc, layers, enable_nested_tensor=False)
        self.intensity = nn.Linear(d, K)
        self.alpha = nn.Parameter(torch.full((K,), -0.1))
        self.register_buffer("freq", torch.tensor([math.pow(10000.0, -2.0 * (i // 2) / d) for i in range(d)]))

    def temporal_enc(self, t):
        r = t.unsqueeze(-1) * self.freq
        return torch.where(torch.arange(self.d) % 2 == 0, torch.sin(r), torch.cos(r))

    def forward(self, types, times):
        L = types.shape[1]
        mask = torch.triu(torch.full((L, L), float("-inf")), 1)
        h = self.encoder(self.type_emb(types) + self.temporal_enc(times), mask=mask)
        return h, times, self.intensity, self.alpha


def _nll(out, types):
    h, times, head, alpha = out
    base = head(h[:, :-1])                                     # B, L-1, K  (history up to t_j)
    tj = times[:, :-1]
    dt = times[:, 1:] - tj
    # log intensity of the observed next event
    lam_next = F.softplus(alpha * (dt / tj).unsqueeze(-1) + base)
    ll_events = torch.log(lam_next.gather(-1, types[:, 1:].unsqueeze(-1)).squeeze(-1) + 1e-9)
    # compensator by midpoint quadrature over (t_j, t_{j+1}]
    u = (torch.arange(8).float() + 0.5) / 8
    s = (dt.unsqueeze(-1) * u) / tj.unsqueeze(-1)              # B, L-1, M
    lam_s = F.softplus(alpha * s.unsqueeze(-1) + base.unsqueeze(2))  # B, L-1, M, K
    integral = lam_s.sum(-1).mean(-1) * dt
    return -(ll_events - integral).sum() / ll_events.numel()


def _sequences(g, B, L, K, trans, rate):
    types = torch.zeros(B, L, dtype=torch.long)
    types[:, 0] = torch.randint(0, K, (B,), generator=g)
    for i in range(1, L):
        types[:, i] = torch.multinomial(trans[types[:, i - 1]], 1, generator=g).squeeze(-1)
    u = torch.rand(B, L, generator=g).clamp_min(1e-6)
    dt = -torch.log(u) / rate[types]   # gap before event i depends on its type
    times = 1.0 + torch.cumsum(dt, 1)
    return types, times


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, layers=1, heads=2, B=16, L=24, K=3, lr=1e-3, steps=100, bad_step=2),
           dict(d=48, layers=2, heads=4, B=12, L=20, K=4, lr=1.5e-3, steps=90, bad_step=4),
           dict(d=40, layers=1, heads=4, B=20, L=16, K=4, lr=1e-3, steps=110, bad_step=1)][seed % 3]
    torch.manual_seed(seed)
    model = THP(cfg["K"], cfg["d"], cfg["layers"], cfg["heads"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(321 + seed)
    K = cfg["K"]
    trans = torch.softmax(torch.randn(K, K, generator=g) * 3.0, -1)
    rate = torch.linspace(0.3, 6.0, K)[torch.randperm(K, generator=g)]
    batches = []
    data = [_sequences(g, cfg["B"], cfg["L"], K, trans, rate) for _ in range(cfg["steps"])]
    for i, (types, times) in enumerate(data):
        if i == cfg["bad_step"] and not fixed:
            times = times * 1e6   # this shard was exported in microseconds
        batches.append(((types, times), types))
    return dict(model=model, optimizer=opt, loss_fn=_nll, batches=batches, steps=cfg["steps"])
