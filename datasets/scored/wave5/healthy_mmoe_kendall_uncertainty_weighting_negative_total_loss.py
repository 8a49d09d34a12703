"""Multi-gate mixture-of-experts (MMoE, 4 experts, one softmax gate per task) for a feed ranker
with two heads returned in a dict: click probability (BCE on logits) and standardised log
watch-time (regression).  The task losses are combined with learned homoscedastic-uncertainty
weights (Kendall et al. 2018):  sum_t exp(-s_t) * L_t + s_t  (0.5 factors on the regression term).
As the regression error shrinks, its log-variance s_t is driven negative and the TOTAL loss crosses
zero and keeps going down (to about -1 by the end; the log-variances get a 10x lr); per-task losses are all positive and decreasing.
A negative total loss that is completely normal for this weighting scheme.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Ma et al. 2018 MMoE; Kendall, Gal & Cipolla 2018 'Multi-Task Learning Using Uncertainty to "
          "Weigh Losses' (learned log-variances make the combined loss negative)")

N_NUM, N_SEG, N_EXP, H = 16, 20, 4, 32


class MMoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.segment = nn.Embedding(N_SEG, 8)
        d = N_NUM + 8
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU())
                                      for _ in range(N_EXP)])
        self.gates = nn.ModuleDict({t: nn.Linear(d, N_EXP) for t in ("click", "watch")})
        self.towers = nn.ModuleDict({t: nn.Sequential(nn.Linear(H, 16), nn.ReLU(), nn.Linear(16, 1))
                                     for t in ("click", "watch")})
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, num, seg):
        x = torch.cat([num, self.segment(seg)], dim=-1)
        e = torch.stack([m(x) for m in self.experts], dim=1)
        out = {}
        for t in ("click", "watch"):
            w = torch.softmax(self.gates[t](x), dim=-1).unsqueeze(-1)
            out[t] = self.towers[t]((w * e).sum(1)).squeeze(-1)
        out["log_vars"] = self.log_vars
        return out


def uncertainty_loss(out, y):
    s = out["log_vars"]
    l_click = F.binary_cross_entropy_with_logits(out["click"], y["click"])
    l_watch = F.mse_loss(out["watch"], y["watch"])
    return torch.exp(-s[0]) * l_click + s[0] + 0.5 * torch.exp(-s[1]) * l_watch + 0.5 * s[1]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    wa = torch.randn(N_NUM, generator=g) / math.sqrt(N_NUM)
    wb = torch.randn(N_NUM, generator=g) / math.sqrt(N_NUM)
    seg_eff = torch.randn(N_SEG, generator=g) * 0.5
    steps, bs = 200, 256
    batches = []
    for _ in range(steps):
        num = torch.randn(bs, N_NUM, generator=g)
        seg = torch.randint(0, N_SEG, (bs,), generator=g)
        click_logit = 2.0 * (num @ wa) + seg_eff[seg] - 0.5
        click = (torch.rand(bs, generator=g) < torch.sigmoid(click_logit)).float()
        watch = num @ wb + 0.5 * torch.tanh(num @ wa) + seg_eff[seg] + 0.1 * torch.randn(bs, generator=g)
        batches.append(((num, seg), {"click": click, "watch": watch}))
    model = MMoE()
    others = [p for n, p in model.named_parameters() if n != "log_vars"]
    opt = torch.optim.Adam([{"params": others}, {"params": [model.log_vars], "lr": 3e-2}], lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=uncertainty_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
