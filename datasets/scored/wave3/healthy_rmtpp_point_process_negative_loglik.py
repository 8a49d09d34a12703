"""RMTPP-style neural temporal point process (Du et al. 2016) for event sequences (e.g. user
sessions or transactions): a GRU reads (inter-event time, event type) pairs and parameterises the
conditional intensity lambda(t) = exp(v*h + w*t + b) of the next event plus a categorical over types.
The loss is the per-event negative log-likelihood, time part: -(log lambda(dt) - integral_0^dt lambda).
Looks alarming but is normal: for densely spaced events (mean gap ~0.1) the optimal intensity is ~10,
so the time NLL is legitimately NEGATIVE and keeps decreasing below zero; the exp link produces
gradients of a few units early on.  Training is healthy and converges."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "RMTPP (Du et al., KDD 2016) negative log-likelihood of a temporal point process is often negative"


class RMTPP(nn.Module):
    def __init__(self, n_types, hidden):
        super().__init__()
        self.type_emb = nn.Embedding(n_types, 8)
        self.gru = nn.GRU(9, hidden, batch_first=True)
        self.v = nn.Linear(hidden, 1)
        self.w = nn.Parameter(torch.tensor(0.1))
        self.type_head = nn.Linear(hidden, n_types)

    def forward(self, gaps, types):
        x = torch.cat([gaps.unsqueeze(-1), self.type_emb(types)], -1)
        h, _ = self.gru(x)
        return {"base": self.v(h).squeeze(-1), "w": self.w, "type_logits": self.type_head(h)}


def rmtpp_nll(out, y):
    dt, nxt_type = y["dt"], y["type"]
    base, w = out["base"], out["w"]
    w = w.clamp(min=1e-3) if w.item() >= 0 else w.clamp(max=-1e-3)
    log_lam = base + w * dt
    integral = (torch.exp(base + w * dt) - torch.exp(base)) / w
    time_nll = -(log_lam - integral).mean()
    type_nll = F.cross_entropy(out["type_logits"].reshape(-1, out["type_logits"].shape[-1]), nxt_type.reshape(-1))
    return time_nll + type_nll


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    hidden, bs, seqlen, lr, steps = [(32, 32, 30, 5e-3, 150), (24, 48, 24, 5e-3, 120), (48, 24, 40, 4e-3, 180)][seed % 3]
    n_types = 5
    model = RMTPP(n_types, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    trans = torch.softmax(2 * torch.randn(n_types, n_types, generator=g), -1)
    rate = 5 + 20 * torch.rand(n_types, generator=g)          # each type's follow-up rate (events / unit time)
    batches = []
    for _ in range(steps):
        types = torch.empty(bs, seqlen + 1, dtype=torch.long)
        gaps = torch.empty(bs, seqlen + 1)
        types[:, 0] = torch.randint(0, n_types, (bs,), generator=g)
        gaps[:, 0] = 0.1
        for t in range(seqlen):
            types[:, t + 1] = torch.multinomial(trans[types[:, t]], 1, generator=g).squeeze(1)
            gaps[:, t + 1] = -torch.log(torch.rand(bs, generator=g)) / rate[types[:, t]]
        batches.append(((gaps[:, :-1], types[:, :-1]), {"dt": gaps[:, 1:], "type": types[:, 1:]}))
    return dict(model=model, optimizer=opt, loss_fn=rmtpp_nll, batches=batches, steps=steps, amp_dtype=None, scaler=None)
