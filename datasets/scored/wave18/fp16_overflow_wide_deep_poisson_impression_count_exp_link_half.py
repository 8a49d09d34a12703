"""Wide & Deep impression-volume forecaster with a Poisson exp link, trained under fp16 autocast.

Mechanism: the model predicts the expected number of impressions of an ad campaign in a
(placement, hour, device) slot.  The wide part is an nn.Linear over multi-hot one-hot and
crossed (campaign x device) indicators, the deep part an embedding MLP; their sum is the log
rate and an ExpLink module returns rate = exp(log_rate), scored with nn.PoissonNLLLoss
(log_input=False, full=True).  Under torch.autocast(float16) both nn.Linear outputs are half, so the log
rate and the exp run in half.  The output bias is initialised to the mean log-count (~8), so the
run starts calm; as the model learns the big campaigns (true rates 1e5-2e5 impressions),
their log rate climbs past 11.09 and exp() passes 65504: the rate is +inf in half and the
loss becomes inf.  In fp32 or bf16 the very same run trains normally.

ORIGIN is "link": the ExpLink module is the op that produces the first non-finite value
(its input is still finite).

Fix: autocast to bfloat16 instead of float16 (same exponent range as fp32); nothing else
changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "link"
SOURCE = ("Wide & Deep (Cheng et al. 2016) used as a count/volume model with a Poisson loss "
          "and exp link; the fp16 exp overflow of large rates (> 65504) is the pattern "
          "behind 'Poisson loss inf with AMP' reports.")

N_CAMP, N_PLACE, N_HOUR, N_DEV, N_CROSS = 200, 20, 24, 4, 256


class ExpLink(nn.Module):
    def forward(self, log_rate):
        return torch.exp(log_rate)


class WideDeep(nn.Module):
    def __init__(self, emb_dim, hidden, init_log_rate):
        super().__init__()
        n_wide = N_CAMP + N_PLACE + N_HOUR + N_DEV + N_CROSS
        self.wide = nn.Linear(n_wide, 1)
        self.emb_camp = nn.Embedding(N_CAMP, emb_dim)
        self.emb_place = nn.Embedding(N_PLACE, emb_dim)
        self.emb_hour = nn.Embedding(N_HOUR, emb_dim)
        self.emb_dev = nn.Embedding(N_DEV, emb_dim)
        layers, d = [], 4 * emb_dim + 2
        for hdim in hidden:
            layers += [nn.Linear(d, hdim), nn.ReLU()]
            d = hdim
        layers.append(nn.Linear(d, 1))
        self.deep = nn.Sequential(*layers)
        with torch.no_grad():
            self.deep[-1].bias.fill_(init_log_rate)   # start at the mean log-count
            self.wide.weight.mul_(0.1)
            self.wide.bias.zero_()
        self.link = ExpLink()

    def forward(self, wide_x, cat, dense):
        e = torch.cat([self.emb_camp(cat[:, 0]), self.emb_place(cat[:, 1]),
                       self.emb_hour(cat[:, 2]), self.emb_dev(cat[:, 3])], dim=1)
        log_rate = self.wide(wide_x) + self.deep(torch.cat([e, dense], dim=1))
        return self.link(log_rate).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    emb_dim = [8, 16, 12][seed]
    hidden = [[64, 32], [128, 64, 32], [96, 48]][seed]
    lr = [2e-3, 1.5e-3, 3e-3][seed]
    bs = [256, 128, 192][seed]
    steps = 150

    camp_log_rate = 4.0 + 8.3 * torch.rand(N_CAMP, generator=g)      # up to ~2.2e5 / slot
    place_eff = 0.5 * torch.randn(N_PLACE, generator=g)
    hour_eff = 0.4 * torch.sin(torch.arange(N_HOUR) / N_HOUR * 2 * math.pi)
    dev_eff = torch.tensor([0.3, 0.0, -0.2, -0.6])
    budget_z = (camp_log_rate - camp_log_rate.mean()) / camp_log_rate.std()

    batches = []
    all_counts = []
    for _ in range(steps):
        c = torch.randint(0, N_CAMP, (bs,), generator=g)
        p = torch.randint(0, N_PLACE, (bs,), generator=g)
        h = torch.randint(0, N_HOUR, (bs,), generator=g)
        d = torch.randint(0, N_DEV, (bs,), generator=g)
        lam = torch.exp(camp_log_rate[c] + place_eff[p] + hour_eff[h] + dev_eff[d] - 0.3)
        y = torch.poisson(lam, generator=g)
        all_counts.append(y)
        cross = (c * 7919 + d * 104729) % N_CROSS
        wide_x = torch.zeros(bs, N_CAMP + N_PLACE + N_HOUR + N_DEV + N_CROSS)
        offs = [0, N_CAMP, N_CAMP + N_PLACE, N_CAMP + N_PLACE + N_HOUR,
                N_CAMP + N_PLACE + N_HOUR + N_DEV]
        for off, idx in zip(offs, [c, p, h, d, cross]):
            wide_x[torch.arange(bs), off + idx] = 1.0
        cat = torch.stack([c, p, h, d], dim=1)
        dense = torch.stack([budget_z[c] + 0.3 * torch.randn(bs, generator=g),
                             torch.randn(bs, generator=g)], dim=1)
        batches.append(((wide_x, cat, dense), y))

    init_log_rate = torch.log1p(torch.cat(all_counts)).mean().item()
    model = WideDeep(emb_dim, hidden, init_log_rate)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.PoissonNLLLoss(log_input=False, full=True)
    amp_dtype = torch.bfloat16 if fixed else torch.float16
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=steps, amp_dtype=amp_dtype)
